#!/usr/bin/env python3
"""check_dockerfile.py BOARDKEEPER: the CTest test deploy.dockerfile, without Docker.

Docker is not needed to catch what usually breaks this image:
  - the runtime stage installs every shared library the binary loads: each library that
    `ldd BOARDKEEPER` resolves (built on Debian 12 like the image) must belong to a package
    the runtime stage installs, to one of their dependencies, or to the base image (the
    Essential packages and apt, as in bookworm-slim);
  - the build stage installs every -dev package of deploy/local/setup.sh (but googletest),
    so a new dependency added there cannot be forgotten here;
  - the build stage builds the binary alone (BK_TESTS=OFF) and copies only what exists and
    what .dockerignore lets into the build context;
  - the runtime stage: Debian bookworm(-slim) bases, a numeric non-root USER, the binary at
    /usr/local/bin/boardkeeper as the exec-form ENTRYPOINT, the migrations and the example
    config where the Kubernetes manifests and the docs expect them.
BK_DOCKERFILE=FILE checks another Dockerfile (with the repository's context).
"""
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DOCKERFILE = os.environ.get("BK_DOCKERFILE") or os.path.join(ROOT, "deploy", "docker", "Dockerfile")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def instructions(path):
    """(instruction, argument text) pairs, continuation lines joined, comments dropped."""
    out, buf = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not buf and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if buf and line.lstrip().startswith("#"):
                continue
            if line.endswith("\\"):
                buf += line[:-1] + " "
                continue
            buf += line
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            buf = ""
    return out


def stages(instrs):
    args, result = {}, []
    for word, rest in instrs:
        if word == "ARG" and not result:
            name, _, default = rest.partition("=")
            args[name] = default
        elif word == "FROM":
            image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), rest.split()[0])
            result.append({"image": image, "from": rest, "instrs": []})
        elif result:
            result[-1]["instrs"].append((word, rest))
        else:
            fail(f"{word} before the first FROM")
    return result


def apt_installs(stage):
    pkgs = []
    for word, rest in stage["instrs"]:
        if word != "RUN":
            continue
        for command in re.split(r"&&|;", rest):
            words = shlex.split(command)
            if "apt-get" in words and "install" in words:
                after = words[words.index("install") + 1:]
                pkgs += [w for w in after if not w.startswith("-")]
    return pkgs


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def package_of(lib):
    candidates = [lib, os.path.realpath(lib)]
    for c in list(candidates):
        if c.startswith("/usr/"):
            candidates.append(c[4:])
        else:
            candidates.append("/usr" + c)
    for c in candidates:
        r = run(["dpkg-query", "-S", c])
        if r.returncode == 0:
            return r.stdout.split(":")[0].split(",")[0].strip()
    return None


def depends_closure(roots):
    """Installed packages reachable from roots through Depends and Pre-Depends."""
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        r = run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", p])
        if r.returncode != 0:
            continue
        for alternatives in r.stdout.split(","):
            for alt in alternatives.split("|"):
                name = alt.strip().split(" ")[0].split(":")[0]
                if name and run(["dpkg-query", "-W", name]).returncode == 0:
                    todo.append(name)
                    break
    return seen


def essential_packages():
    r = run(["dpkg-query", "-W", "-f=${Package} ${Essential}\\n"])
    return [line.split()[0] for line in r.stdout.splitlines() if line.endswith(" yes")]


def bk_packages():
    setup = os.path.join(ROOT, "deploy", "local", "setup.sh")
    r = run(["bash", "-c", f'source "{setup}" && printf "%s\\n" "${{BK_PACKAGES[@]}}"'])
    return r.stdout.split()


def dockerignore_admits(path):
    """True when the root .dockerignore (an allowlist: '*' then '!path' lines) lets path in."""
    ignore = os.path.join(ROOT, ".dockerignore")
    if not os.path.exists(ignore):
        return True
    patterns = [l.strip() for l in open(ignore, encoding="utf-8") if l.strip() and not l.startswith("#")]
    admitted = True
    for p in patterns:
        negate = p.startswith("!")
        p = p[1:] if negate else p
        p = p.rstrip("/")
        if p == "*" or path.rstrip("/") == p or path.startswith(p + "/"):
            admitted = negate
    return admitted


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    if not binary:
        sys.exit("usage: check_dockerfile.py BOARDKEEPER")
    st = stages(instructions(DOCKERFILE))
    if len(st) < 2:
        fail("want a build stage and a runtime stage")
        return
    build, runtime = st[0], st[-1]
    if build["image"] != "debian:bookworm":
        fail(f"build stage from {build['image']}, want debian:bookworm")
    if runtime["image"] != "debian:bookworm-slim":
        fail(f"runtime stage from {runtime['image']}, want debian:bookworm-slim")

    # The build stage: setup.sh's -dev packages, the binary alone.
    build_pkgs = set(apt_installs(build))
    wanted = [p for p in bk_packages() if p.endswith("-dev") and "gtest" not in p and "gmock" not in p]
    wanted += ["cmake", "pkg-config"]
    for p in wanted:
        if p not in build_pkgs:
            fail(f"build stage does not install {p} (deploy/local/setup.sh needs it)")
    if not ({"build-essential", "g++"} & build_pkgs):
        fail("build stage installs no C++ compiler (build-essential or g++)")
    build_runs = " ".join(rest for word, rest in build["instrs"] if word == "RUN")
    if "-DBK_TESTS=OFF" not in build_runs:
        fail("build stage must configure with -DBK_TESTS=OFF (no googletest in the image)")
    if "--target boardkeeper" not in build_runs:
        fail("build stage must build --target boardkeeper")

    for s in st:
        for word, rest in s["instrs"]:
            if word != "COPY" or "--from=" in rest:
                continue
            srcs = shlex.split(rest)[:-1]
            for src in srcs:
                if not os.path.exists(os.path.join(ROOT, src)):
                    fail(f"COPY {src}: no such file in the repository")
                elif not dockerignore_admits(src):
                    fail(f"COPY {src}: .dockerignore keeps it out of the build context")

    # The runtime stage: every library the binary loads.
    runtime_pkgs = apt_installs(runtime)
    ldd = run(["ldd", binary])
    if ldd.returncode != 0:
        fail(f"ldd {binary}: {ldd.stderr.strip()}")
        return
    provided = depends_closure(runtime_pkgs)
    base = depends_closure(essential_packages() + ["apt"])
    checked = 0
    for line in ldd.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if not m:
            continue
        name, lib = m.groups()
        if re.match(r"lib(asan|ubsan|lsan|tsan)\.", name):
            continue  # a BK_SANITIZE=ON build; the image is built without sanitizers
        if lib == "not":
            fail(f"ldd: {name} not found")
            continue
        pkg = package_of(lib)
        checked += 1
        if pkg is None:
            fail(f"{name} ({lib}) belongs to no Debian package: the image could not install it")
        elif pkg not in provided and pkg not in base:
            fail(f"{name} comes from {pkg}, which the runtime stage does not install (nor a dependency)")
    for p in ("tzdata", "ca-certificates"):
        if p not in runtime_pkgs:
            fail(f"runtime stage does not install {p}")
    extra = [p for p in runtime_pkgs if p.endswith("-dev")]
    if extra:
        fail(f"runtime stage installs -dev packages: {' '.join(extra)}")

    rinstrs = runtime["instrs"]
    users = [rest for word, rest in rinstrs if word == "USER"]
    if not users or not re.fullmatch(r"[1-9][0-9]*(:[0-9]+)?", users[-1]):
        fail(f"runtime USER {users[-1] if users else '(none)'}: want a numeric non-root uid")
    entry = [rest for word, rest in rinstrs if word == "ENTRYPOINT"]
    if not entry or entry[-1] not in ('["/usr/local/bin/boardkeeper"]', '["boardkeeper"]'):
        fail(f"ENTRYPOINT {entry[-1] if entry else '(none)'}: want exec form running boardkeeper")
    copies = [shlex.split(rest) for word, rest in rinstrs if word == "COPY"]
    dests = {c[-1].rstrip("/") for c in copies}
    for d in ("/usr/local/bin/boardkeeper", "/usr/share/boardkeeper/sql", "/etc/boardkeeper/boardkeeper.yaml"):
        if d not in dests:
            fail(f"runtime stage copies nothing to {d}")

    # One version source: CMakeLists.txt. The image's version comes in as a build argument
    # that the build stage checks against the binary; nothing else in the Dockerfile names
    # a version.
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        version = re.search(r"project\(boardkeeper VERSION ([0-9.]+)", f.read()).group(1)
    text = open(DOCKERFILE, encoding="utf-8").read()
    code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    if version in code:
        fail(f"the Dockerfile names the version {version}: pass it as --build-arg VERSION instead")
    if not re.search(r'grep -q "\^boardkeeper \$\{VERSION', build_runs):
        fail("the build stage must check VERSION against `boardkeeper --version`")
    labels = " ".join(rest for word, rest in rinstrs if word == "LABEL")
    for key in ("title", "version", "revision", "source", "licenses"):
        if f"org.opencontainers.image.{key}=" not in labels:
            fail(f"runtime stage lacks the OCI label org.opencontainers.image.{key}")
    # The runtime stage leaves no apt caches or logs behind in the layer that installs.
    for word, rest in rinstrs:
        if word == "RUN" and "apt-get install" in rest:
            for must in ("apt-get clean", "/var/lib/apt/lists/*", "/var/cache/apt/*", "/var/log/apt"):
                if must not in rest:
                    fail(f"runtime stage's apt RUN does not remove {must}")

    print(f"Dockerfile: build stage {len(build_pkgs)} packages; runtime stage covers the "
          f"{checked} libraries ldd finds ({' '.join(runtime_pkgs)})")


main()
if failures:
    print(f"{len(failures)} problem(s) in {DOCKERFILE}")
    sys.exit(1)
