# The ServerFS tree built once (npm workspaces: every library and the three apps), installed
# under $out/lib/serverfs with one wrapper per program in $out/bin. Called from flake.nix.
{
  lib,
  buildNpmPackage,
  importNpmLock,
  nodejs_20,
  python3,
  makeWrapper,
  src,
}:
let
  packageJson = lib.importJSON (src + "/package.json");
  packageLock = import ./npm-lock.nix { } (lib.importJSON (src + "/package-lock.json"));
in
buildNpmPackage {
  pname = "serverfs";
  inherit (packageJson) version;
  inherit src;
  nodejs = nodejs_20;

  # No npmDepsHash to keep in step with the lock: every package is fetched by its own integrity.
  npmDeps = importNpmLock {
    npmRoot = src;
    inherit packageLock;
  };
  npmConfigHook = importNpmLock.npmConfigHook;

  # node-gyp builds libs/posix and better-sqlite3 from nodejs's own headers (never downloaded).
  nativeBuildInputs = [
    python3
    makeWrapper
  ];
  # better-sqlite3 tries a prebuilt binary first; there is no network in the build.
  env.npm_config_build_from_source = "true";

  npmBuildScript = "build";

  # The workspace layout is the install layout: node_modules links @serverfs/* to apps/ and libs/.
  installPhase = ''
    runHook preInstall
    npm prune --omit=dev --no-save
    mkdir -p $out/lib/serverfs $out/bin
    cp -r package.json node_modules apps libs docs $out/lib/serverfs/
    for program in mcp:serverfs-mcp bridge:serverfs-bridge cli:serverfs; do
      makeWrapper ${lib.getExe nodejs_20} $out/bin/''${program#*:} \
        --add-flags $out/lib/serverfs/apps/''${program%%:*}/dist/bundle/''${program#*:}.js
    done
    runHook postInstall
  '';

  meta = {
    description = packageJson.description;
    platforms = lib.platforms.linux;
    mainProgram = "serverfs-mcp";
  };
}
