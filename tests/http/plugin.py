#!/usr/bin/env python3
"""The executable's HTTP plugin (libtrajcheck-http.so, docs/architecture.md).

1. The executable does not load cpp-httplib or OpenSSL at start (its dynamic section names
   neither), so `check` starts without them.
2. A copy of the executable without the plugin beside it: `check` works; `serve` and
   `guard --otlp-endpoint` stop with exit 2, naming the plugin and where it was looked for.
   Beside a library that is not the plugin, or a plugin of another interface version: the same.
3. An installed copy (cmake --install into a temporary prefix): the executable finds the plugin
   in its installed place; `serve` listens and stops cleanly on SIGTERM.

    python3 tests/http/plugin.py TRAJCHECK BUILD_DIR WORKDIR
"""
import os, re, shutil, signal, subprocess, sys, time

BIN, BUILD, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
RULES = os.path.join(TESTS, "golden", "check", "otlp-batched", "case.rules")
TRACE = os.path.join(TESTS, "data", "producers", "otel", "batched.jsonl")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
problems = []


def fail(msg):
    problems.append(msg)
    print("FAIL:", msg, flush=True)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)


# 1. Nothing of cpp-httplib or OpenSSL among the executable's NEEDED libraries.
needed = run(["readelf", "-d", BIN]).stdout
names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed)
if not names:
    fail(f"readelf -d {BIN} shows no NEEDED entries:\n{needed}")
for n in names:
    if re.match(r"lib(cpp-httplib|ssl|crypto|brotli)", n):
        fail(f"the executable needs {n} at every start")

# 2. Without the plugin.
alone = os.path.join(WORK, "alone")
os.makedirs(alone)
exe = os.path.join(alone, "trajcheck")
shutil.copy2(BIN, exe)
r = run([exe, "check", "-r", RULES, "--format", "jsonl", TRACE])
expected = run([BIN, "check", "-r", RULES, "--format", "jsonl", TRACE])
if r.returncode != expected.returncode or r.stdout != expected.stdout or not r.stdout:
    fail(f"check without the plugin: exit {r.returncode}, stdout differs: {r.stderr}")
r = run([exe, "serve", "-r", RULES, "--listen", "127.0.0.1:0"])
if r.returncode != 2 or "libtrajcheck-http.so" not in r.stderr or alone not in r.stderr:
    fail(f"serve without the plugin: exit {r.returncode}, stderr {r.stderr!r}")
r = run([exe, "guard", "-r", RULES, "--otlp-endpoint", "http://127.0.0.1:9", "--", sys.executable, "-c", "pass"],
        input="")
if r.returncode != 2 or "--otlp-endpoint" not in r.stderr or "libtrajcheck-http.so" not in r.stderr:
    fail(f"guard --otlp-endpoint without the plugin: exit {r.returncode}, stderr {r.stderr!r}")

# A plugin that is not trajcheck's, or from a build whose HTTP interface differs, is refused.
cc = shutil.which("cc") or shutil.which("gcc")
if not cc:
    fail("no C compiler (cc) to build the stand-in plugins")
else:
    for name, source, expected in [
            ("other", "int something_else(void) { return 0; }\n", "no trajcheck_http_api in it"),
            ("stale", "struct Api { int version; unsigned long size; void* a; void* b; };\n"
                      "static const struct Api api = {999, sizeof(struct Api), 0, 0};\n"
                      "const struct Api* trajcheck_http_api(void) { return &api; }\n",
             "from another build of trajcheck")]:
        folder = os.path.join(WORK, name)
        os.makedirs(folder)
        shutil.copy2(BIN, os.path.join(folder, "trajcheck"))
        with open(os.path.join(folder, "plugin.c"), "w") as f:
            f.write(source)
        built = run([cc, "-shared", "-fPIC", "-o", os.path.join(folder, "libtrajcheck-http.so"),
                     os.path.join(folder, "plugin.c")])
        if built.returncode != 0:
            fail(f"{cc} did not build the {name} plugin: {built.stderr}")
            continue
        r = run([os.path.join(folder, "trajcheck"), "serve", "-r", RULES, "--listen", "127.0.0.1:0"])
        if r.returncode != 2 or expected not in r.stderr:
            fail(f"serve beside the {name} plugin: exit {r.returncode}, stderr {r.stderr!r}")

# 3. Installed.
prefix = os.path.join(WORK, "prefix")
r = run(["cmake", "--install", BUILD, "--prefix", prefix, "--component", "Unspecified"])
if r.returncode != 0:
    fail(f"cmake --install: {r.stderr}")
else:
    installed = os.path.join(prefix, "bin", "trajcheck")
    err_path = os.path.join(WORK, "installed-serve.stderr")
    with open(err_path, "w") as err:
        p = subprocess.Popen([installed, "serve", "-r", RULES, "--listen", "127.0.0.1:0", "--out",
                              os.path.join(WORK, "verdicts.jsonl")], stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None and "listening on" not in open(err_path).read():
            time.sleep(0.05)
        if "listening on" not in open(err_path).read():
            fail(f"the installed serve did not listen: exit {p.poll()}, {open(err_path).read()!r}")
        else:
            p.send_signal(signal.SIGTERM)
            if p.wait(timeout=30) != 0:
                fail(f"the installed serve exited {p.returncode} on SIGTERM: {open(err_path).read()!r}")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

if problems:
    sys.exit(f"{len(problems)} problem(s)")
print("ok: check runs without the plugin; serve and guard --otlp-endpoint say it is missing; installed, serve finds it")
