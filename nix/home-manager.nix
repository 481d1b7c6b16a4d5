# home-manager module: the systemd --user units of docs/deploy, with ExecStart pointing at the
# flake's programs instead of a source tree in ~/.local/lib/serverfs. The unit files themselves
# are the ones in docs/deploy (one source of truth, checked by systemd-analyze in the tests);
# only their ExecStart lines and the ReadWritePaths drop-in are generated here.
#
#   imports = [ serverfs.homeManagerModules.default ];
#   services.serverfs = { bridge.enable = true; mcpHttp.enable = true; readWritePaths = [ "/home/alice/scratch" ]; };
#
# The configuration files stay the operator's: ~/.config/serverfs/serverfs.env and
# mcp-http.env, as in docs/deploy/README.md.
{ self }:
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.serverfs;
  deploy = self + "/docs/deploy";
  unit =
    name: app: program:
    pkgs.writeText name (
      builtins.replaceStrings
        [ "ExecStart=/usr/bin/node %h/.local/lib/serverfs/apps/${app}/dist/bundle/${program}.js" ]
        [ "ExecStart=${cfg.package}/bin/${program}" ]
        (builtins.readFile (deploy + "/${name}"))
    );
  # The unit file plus the link `systemctl --user enable` would make (WantedBy=default.target).
  installed = file: {
    "systemd/user/${file.name}".source = file;
    "systemd/user/default.target.wants/${file.name}".source = file;
  };
in
{
  options.services.serverfs = {
    package = lib.mkOption {
      type = lib.types.package;
      default = self.packages.${pkgs.stdenv.hostPlatform.system}.serverfs;
      description = "The ServerFS build (all three programs).";
    };
    bridge.enable = lib.mkEnableOption "serverfs-bridge as a systemd --user service";
    mcpHttp.enable = lib.mkEnableOption "serverfs-mcp over Streamable HTTP as a systemd --user service";
    readWritePaths = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = "The read-write workdirs: the only paths serverfs-mcp-http.service may write.";
    };
  };

  config = lib.mkMerge [
    (lib.mkIf cfg.bridge.enable {
      xdg.configFile = installed (unit "serverfs-bridge.service" "bridge" "serverfs-bridge");
    })
    (lib.mkIf cfg.mcpHttp.enable {
      xdg.configFile =
        installed (unit "serverfs-mcp-http.service" "mcp" "serverfs-mcp")
        // {
          "systemd/user/serverfs-mcp-http.service.d/workdirs.conf".text =
            "[Service]\n" + lib.concatMapStrings (path: "ReadWritePaths=${path}\n") cfg.readWritePaths;
        }
        // lib.optionalAttrs cfg.bridge.enable {
          "systemd/user/serverfs-mcp-http.service.d/agents.conf".source =
            deploy + "/serverfs-mcp-http.service.d/agents.conf";
        };
    })
  ];
}
