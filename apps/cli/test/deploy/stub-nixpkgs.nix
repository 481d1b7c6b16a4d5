# A stand-in for nixpkgs with just what flake.nix and nix/package.nix call, for evaluating the
# flake's outputs offline (nixpkgs cannot be fetched here). Derivations are real
# builtins.derivation values, so `nix flake show`/`check --no-build` treat them as packages, but
# nothing is ever built: each records the arguments it was called with under `passthru.args`.
let
  systems = [
    "x86_64-linux"
    "aarch64-linux"
  ];
  stubDrv =
    system: name: args:
    (derivation {
      inherit name system;
      builder = "/bin/sh";
      args = [
        "-c"
        "exit 1"
      ];
    })
    // {
      passthru.args = args;
      meta = args.meta or { };
    };
  lib = {
    importJSON = path: builtins.fromJSON (builtins.readFile path);
    getExe = drv: "${drv}/bin/${drv.meta.mainProgram or drv.name}";
    platforms.linux = systems;
  };
  pkgsFor =
    system:
    let
      pkgs = {
        inherit lib;
        nodejs_20 = stubDrv system "nodejs" { meta.mainProgram = "node"; };
        python3 = stubDrv system "python3" { };
        makeWrapper = stubDrv system "make-wrapper" { };
        gcc = stubDrv system "gcc" { };
        gnumake = stubDrv system "gnumake" { };
        git = stubDrv system "git" { };
        util-linux = stubDrv system "util-linux" { };
        systemd = stubDrv system "systemd" { };
        buildNpmPackage = args: stubDrv system "${args.pname}-${args.version}" args;
        importNpmLock = {
          __functor = _: args: { inherit (args) packageLock npmRoot; };
          npmConfigHook = stubDrv system "npm-config-hook" { };
        };
        runCommand =
          name: env: script:
          stubDrv system name (env // { inherit script; });
        mkShell = args: stubDrv system "shell" args;
        callPackage = path: overrides: import path (builtins.intersectAttrs (builtins.functionArgs (import path)) pkgs // overrides);
      };
    in
    pkgs;
in
{
  inherit lib;
  legacyPackages = builtins.listToAttrs (
    map (system: {
      name = system;
      value = pkgsFor system;
    }) systems
  );
}
