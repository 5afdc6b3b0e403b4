/**
 * The Python side of `remote verl --check`, run with `python -c` in the user's verl checkout (its own Python,
 * which has hydra-core because verl needs it). It composes the stack's Hydra config with hydra-core's compose API
 * and imports nothing of verl, so no GPU, torch or vLLM is needed. Arguments: workdir, config dir (relative to
 * workdir or absolute), config name, the overrides as a JSON list. It prints one JSON object:
 *   { "unknown": [{override, key, suggestion}], "typeErrors": [{override, key, expected, got}],
 *     "exists": [{override, key}], "invalid": [{override, message}], "missing": [key],
 *     "composeError": str|null, "error": str|null }
 * Checks, per override against the composed base config: a plain or `~` override needs the key to exist; a `+`
 * override needs it absent; a value must fit the type of the default it replaces (bool, number, mapping; a
 * string, list or null default takes any value, as verl's own dataclasses decide those); then the whole set is
 * composed at once, and every `???` field left unset is reported as missing.
 */
export const CHECK_SCRIPT = String.raw`
import difflib, json, os, sys
out = {"unknown": [], "typeErrors": [], "exists": [], "invalid": [], "missing": [], "composeError": None, "error": None}
def done():
    print(json.dumps(out))
    sys.exit(0)
try:
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import DictConfig, ListConfig, OmegaConf
except ImportError as e:
    out["error"] = "hydra-core is not importable by %s (%s): run the check with the Python of the verl checkout's environment (--python), or pip install hydra-core" % (sys.executable, e)
    done()
workdir, config_dir, config_name, overrides = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
os.chdir(workdir)
config_dir = os.path.abspath(config_dir)
if not os.path.isfile(os.path.join(config_dir, config_name + ".yaml")):
    out["error"] = "no Hydra config %s.yaml in %s: is --workdir the root of a checkout of the chosen stack?" % (config_name, config_dir)
    done()

def lookup(cfg, key):
    node = cfg
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, DictConfig) or part not in list(node.keys()):
            siblings = [str(k) for k in node.keys()] if isinstance(node, DictConfig) else []
            close = difflib.get_close_matches(part, siblings, n=1)
            hint = ".".join(parts[:i] + [close[0]]) if close else None
            return False, None, hint
        child = node._get_node(part)
        if i == len(parts) - 1:
            return True, child, None
        node = node[part] if not OmegaConf.is_missing(node, part) else None
    return False, None, None

def kind(raw):
    if isinstance(raw, bool): return "bool"
    if isinstance(raw, (int, float)): return "number"
    if isinstance(raw, (dict, DictConfig)): return "mapping"
    return None

def fits(expected, value):
    if value is None: return True
    if expected == "bool": return isinstance(value, bool)
    if expected == "number": return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "mapping": return isinstance(value, dict)
    return True

try:
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        base = compose(config_name=config_name)
        parser = OverridesParser.create()
        for text in overrides:
            try:
                o = parser.parse_overrides([text])[0]
            except Exception as e:
                out["invalid"].append({"override": text, "message": str(e).splitlines()[0]})
                continue
            if o.is_sweep_override():
                out["invalid"].append({"override": text, "message": "a sweep: a launch takes one value per key"})
                continue
            key = o.key_or_group
            found, node, hint = lookup(base, key)
            if o.is_add():
                if found: out["exists"].append({"override": text, "key": key})
                continue
            if o.is_force_add():
                if not found: continue
            elif not found:
                out["unknown"].append({"override": text, "key": key, "suggestion": hint})
                continue
            if o.is_delete() or node is None or OmegaConf.is_interpolation(node) or OmegaConf.is_missing(node._get_parent(), node._key()):
                continue
            raw = node._value() if not isinstance(node, (DictConfig, ListConfig)) else (dict() if isinstance(node, DictConfig) else list())
            expected = kind(raw)
            value = o.value()
            if expected and not fits(expected, value):
                out["typeErrors"].append({"override": text, "key": key, "expected": expected, "got": repr(value)})
        valid = [t for t in overrides if not any(t == e["override"] for group in ("unknown", "typeErrors", "exists", "invalid") for e in out[group])]
        try:
            full = compose(config_name=config_name, overrides=valid)
            out["missing"] = sorted(OmegaConf.missing_keys(full))
        except Exception as e:
            out["composeError"] = str(e).splitlines()[0]
except Exception as e:
    out["error"] = "composing %s/%s.yaml failed: %s" % (config_dir, config_name, str(e).splitlines()[0] if str(e) else type(e).__name__)
done()
`;
