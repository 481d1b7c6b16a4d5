# package-lock.json made fetchable by Nix. This repository's lock records each registry package
# by name, version and integrity but without its "resolved" URL (npm leaves it out when the
# lock is written against a configured registry), and importNpmLock fetches only what has one.
# The URL is the registry's fixed tarball layout; the integrity hash still pins the bytes, so a
# wrong URL fails the fetch instead of changing what is built.
#
# Builtins only (no nixpkgs lib): the offline check evaluates this file against the real lock
# with nothing but nix-instantiate (apps/cli/test/deploy/flake.test.ts).
{
  registry ? "https://registry.npmjs.org",
}:
lock:
let
  # "node_modules/a/node_modules/@s/b" → "@s/b"; an alias entry carries the real name in "name".
  nameOf = key: value: value.name or (builtins.elemAt (builtins.match "(.*node_modules/)?(.+)" key) 1);
  # "@s/b" → "b": the tarball is named after the unscoped name.
  baseOf = name: builtins.elemAt (builtins.match "(@[^/]+/)?(.+)" name) 1;
  fromRegistry =
    key: value:
    key != "" && !(value.link or false) && !(value ? resolved) && value ? version && value ? integrity;
  resolve =
    key: value:
    if fromRegistry key value then
      let
        name = nameOf key value;
      in
      value // { resolved = "${registry}/${name}/-/${baseOf name}-${value.version}.tgz"; }
    else
      value;
in
lock // { packages = builtins.mapAttrs resolve lock.packages; }
