# Evaluates nix/home-manager.nix without nixpkgs or home-manager: a stub `lib` with the few
# functions the module calls, the module's options answered by `settings`, and its mkIf/mkMerge
# applied the way the module system would for plain attribute sets. Returns the files the module
# puts under ~/.config (name → text, or the source file's text).
{ root, settings }:
let
  lib = {
    mkOption = o: o;
    mkEnableOption = _: { };
    types = {
      package = null;
      str = null;
      listOf = _: null;
    };
    mkIf = condition: value: if condition then value else { };
    mkMerge =
      parts: builtins.foldl' (a: b: a // b // { xdg.configFile = (a.xdg.configFile or { }) // (b.xdg.configFile or { }); }) { } parts;
    optionalAttrs = condition: set: if condition then set else { };
    concatMapStrings = f: list: builtins.concatStringsSep "" (map f list);
  };
  pkgs = {
    stdenv.hostPlatform.system = "x86_64-linux";
    writeText = name: text: {
      inherit name text;
      outPath = "/nix/store/stub-${name}";
    };
  };
  self = {
    outPath = root;
    packages.x86_64-linux.serverfs = "/nix/store/stub-serverfs";
  };
  module = import (root + "/nix/home-manager.nix") { inherit self; };
  evaluated = module {
    inherit lib pkgs;
    config.services.serverfs = settings // { package = "/nix/store/stub-serverfs"; };
  };
  contentOf = file: file.text or (if file.source ? text then file.source.text else builtins.readFile file.source);
in
builtins.mapAttrs (_: contentOf) (evaluated.config.xdg.configFile or { })
