{
  # ServerFS: serverfs-mcp (the MCP server), serverfs-bridge (the Agent Bridge) and serverfs (the
  # operator CLI). `nix run .#mcp`, `nix run .#bridge`, `nix run .#cli`; `nix develop` for a
  # shell with what `npm ci && npm test` needs. Linux only (the filesystem plane uses Linux
  # system calls). How this file was checked: docs/deploy/README.md, "Nix".
  description = "ServerFS: safe remote access to Linux server directories for AI chats";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAll = f: builtins.listToAttrs (map (system: { name = system; value = f system; }) systems);

      # One build, three programs: each package is the shared tree plus one program's name, so
      # `nix run` and `nix profile install .#bridge` pick the right binary.
      program =
        pkgs: serverfs: name:
        pkgs.runCommand name { meta.mainProgram = name; } ''
          mkdir -p $out/bin
          ln -s ${serverfs}/bin/${name} $out/bin/${name}
        '';
      app = drv: name: {
        type = "app";
        program = "${drv}/bin/${name}";
      };
    in
    {
      packages = forAll (
        system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          serverfs = pkgs.callPackage ./nix/package.nix { src = self; };
        in
        {
          inherit serverfs;
          mcp = program pkgs serverfs "serverfs-mcp";
          bridge = program pkgs serverfs "serverfs-bridge";
          cli = program pkgs serverfs "serverfs";
          default = serverfs;
        }
      );

      apps = forAll (
        system:
        let
          p = self.packages.${system};
        in
        {
          mcp = app p.mcp "serverfs-mcp";
          bridge = app p.bridge "serverfs-bridge";
          cli = app p.cli "serverfs";
          default = app p.mcp "serverfs-mcp";
        }
      );

      devShells = forAll (
        system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
        in
        {
          # Node 20 with its headers (the posix addon), node-gyp's Python and compiler, git and
          # python3 (test oracles), util-linux (setpriv), systemd (systemd-analyze for the unit test).
          default = pkgs.mkShell {
            packages = [
              pkgs.nodejs_20
              pkgs.python3
              pkgs.gcc
              pkgs.gnumake
              pkgs.git
              pkgs.util-linux
              pkgs.systemd
            ];
          };
        }
      );

      # systemd --user services for home-manager: the same units as docs/deploy.
      homeManagerModules.default = import ./nix/home-manager.nix { inherit self; };
    };
}
