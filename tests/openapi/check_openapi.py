#!/usr/bin/env python3
"""docs/openapi.yaml against the code and against real answers.

  check_openapi.py routes --root DIR
      The spec names exactly the routes serve has: every route of src/api/routes.cpp's table
      with its method and access (read, write, admin: the security the operation names), the
      probes of src/http/front.h and the console's pages of src/http/console.cpp; and every
      path and method of the spec is one of them. A route added without the spec fails here.
      (CTest: openapi.routes.)

  check_openapi.py self-test
      Both checks on made-up faults (a route served but not in the spec, a spec path not
      served, an answer with an unknown field, a missing required header, an undocumented
      status, a wrong Content-Type): each must be named. (CTest: openapi.self_test.)

  check_openapi.py answers --root DIR FILE
      FILE holds real exchanges with serve (tests/integration/openapi_test.cpp writes it): a
      JSON array of {"method", "path" (the spec's template), "target", "status",
      "headers" {lower-case name: value}, "body"}. Each is validated against the spec: the
      status is one the operation documents, the Content-Type its media type, the body its
      schema (JSON Schema 2020-12, as OpenAPI 3.1), the headers it requires present and
      valid. Every operation of the spec must have had a successful answer validated.

Needs PyYAML and jsonschema >= 4 (Debian: python3-yaml, python3-jsonschema).
"""
import argparse
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import jsonschema
import yaml

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
TABLE_METHOD = {"get": "get", "post": "post", "put": "put", "del": "delete"}
# The security scheme that a route's access needs (and that an operation must name).
ACCESS_SCHEME = {"read": "readToken", "write": "writeToken", "admin": "adminToken"}


def load_spec(root):
    with open(Path(root) / "docs" / "openapi.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def spec_operations(spec):
    """{(path, method)}: every operation the spec describes."""
    return {(path, m) for path, item in spec["paths"].items() for m in item if m in METHODS}


def table_routes(root):
    """[(path, method, access)] of src/api/routes.cpp's kRoutes."""
    text = (Path(root) / "src" / "api" / "routes.cpp").read_text(encoding="utf-8")
    table = re.search(r"kRoutes\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not table:
        sys.exit("check_openapi: no kRoutes table in src/api/routes.cpp")
    rows = re.findall(
        r'\{R::\w+,\s*"\w+",\s*M::(\w+),\s*"([^"]+)",\s*Access::(\w+),', table.group(1))
    if not rows:
        sys.exit("check_openapi: kRoutes in src/api/routes.cpp has no row this script can read")
    # A row's path is what follows /v1/.
    return [("/v1/" + path, TABLE_METHOD[m], access) for m, path, access in rows]


def fixed_paths(root):
    """The paths serve answers outside the route table: probes and the console's pages."""
    front = (Path(root) / "src" / "http" / "front.h").read_text(encoding="utf-8")
    console = (Path(root) / "src" / "http" / "console.cpp").read_text(encoding="utf-8")
    probes = re.findall(r'request\.path == "(/[^"]*)"', front)
    pages = re.findall(r'\{"(/console[^"]*)",', console)
    if not probes or not pages:
        sys.exit("check_openapi: cannot read the probes of src/http/front.h or the pages of "
                 "src/http/console.cpp")
    return set(probes) | set(pages)


def check_routes(root):
    spec = load_spec(root)
    ops = spec_operations(spec)
    problems = []
    table = table_routes(root)
    served = set()
    for path, method, access in table:
        served.add((path, method))
        op = spec["paths"].get(path, {}).get(method)
        if op is None:
            problems.append(f"{method.upper()} {path} is in the route table "
                            f"(src/api/routes.cpp) but not in docs/openapi.yaml")
            continue
        schemes = {name for req in op.get("security", []) for name in req}
        want = ACCESS_SCHEME[access]
        if want not in schemes:
            problems.append(f"{method.upper()} {path}: access {access} in the route table, but "
                            f"its security does not name {want}")
        if access in ("write", "admin") and (schemes - {want} or {} in op.get("security", [])):
            problems.append(f"{method.upper()} {path}: access {access} takes {want} alone, "
                            f"the spec names {sorted(schemes)}"
                            + (" and no token" if {} in op.get("security", []) else ""))
        if access == "read" and "writeToken" in schemes:
            problems.append(f"{method.upper()} {path}: a write token cannot read")
    for path in fixed_paths(root):
        served.add((path, "get"))
        if (path, "get") not in ops:
            problems.append(f"GET {path} is served (src/http/front.h, console.cpp) but not in "
                            f"docs/openapi.yaml")
    for path, method in sorted(ops - served):
        problems.append(f"{method.upper()} {path} is in docs/openapi.yaml but serve has no such "
                        f"route (src/api/routes.cpp, src/http/front.h, console.cpp)")
    for p in problems:
        print("FAIL", p)
    print(f"openapi.routes: {len(table)} routes of the table and {len(fixed_paths(root))} "
          f"fixed paths against {len(ops)} operations of the spec: "
          f"{'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


class Answers:
    """Validates recorded exchanges against the spec."""

    def __init__(self, spec):
        self.spec = spec
        self.problems = []
        self.validated = {}  # (path, method) -> set of statuses validated

    def resolve(self, obj):
        while isinstance(obj, dict) and "$ref" in obj:
            node = self.spec
            for part in obj["$ref"].lstrip("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            obj = node
        return obj

    def validator(self, schema):
        # The schema inside a document that also holds components, so that its
        # "#/components/..." references resolve (the other keys are ignored by 2020-12).
        root = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "components": self.spec.get("components", {}), "allOf": [schema]}
        return jsonschema.Draft202012Validator(root)

    def check(self, x):
        where = f"{x['method']} {x['target']} -> {x['status']}"
        path, method = x["path"], x["method"].lower()
        item = self.spec["paths"].get(path)
        if item is None:
            return self.fail(where, f"the test names a path the spec lacks: {path}")
        if method == "head":
            method = "get"  # HEAD is taken wherever GET is: the same status and headers
        op = item.get(method)
        status = str(x["status"])
        if op is None:
            if status != "405":
                return self.fail(where, f"{path} has no {method.upper()} in the spec, "
                                        f"yet the answer is not a 405")
            # A method the path does not take: the 405 every operation of the path documents.
            op = next(item[m] for m in item if m in METHODS)
        responses = op["responses"]
        response = responses.get(status) or responses.get(status[0] + "XX")
        if response is None:
            return self.fail(where, f"status {status} is not documented for "
                                    f"{method.upper()} {path} (documented: {sorted(responses)})")
        response = self.resolve(response)
        ok = self.check_headers(where, response, x["headers"])
        ok = self.check_body(where, response, x) and ok
        if ok:
            self.validated.setdefault((path, method), set()).add(status)

    def check_headers(self, where, response, headers):
        ok = True
        for name, header in response.get("headers", {}).items():
            header = self.resolve(header)
            value = headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    ok = self.fail(where, f"header {name} is required and missing")
                continue
            schema = header.get("schema", {})
            if schema.get("type") == "integer":
                if not re.fullmatch(r"\d+", value):
                    ok = self.fail(where, f"header {name}: {value!r} is not a whole number")
                    continue
                value = int(value)
            for e in self.validator(schema).iter_errors(value):
                ok = self.fail(where, f"header {name}: {e.message}")
        return ok

    def check_body(self, where, response, x):
        content = response.get("content", {})
        got_type = x["headers"].get("content-type", "")
        if not content:
            if x["body"]:
                return self.fail(where, f"the spec says no body, the answer has {x['body']!r}")
            return True
        media = self.media_type(content, got_type)
        if media is None:
            return self.fail(where, f"Content-Type {got_type!r} is none of {sorted(content)}")
        if x["method"] == "HEAD":
            return x["body"] == "" or self.fail(where, "a HEAD answer has a body")
        schema = content[media].get("schema", {})
        if media.startswith("application/json"):
            if not x["body"].endswith("\n"):
                self.fail(where, "a JSON answer ends with a newline")
            try:
                body = json.loads(x["body"])
            except ValueError as e:
                return self.fail(where, f"the body is not JSON ({e}): {x['body'][:200]!r}")
        else:
            body = x["body"]
        ok = True
        for e in sorted(self.validator(schema).iter_errors(body), key=lambda e: list(e.path)):
            at = "/".join(str(p) for p in e.absolute_path) or "(the body)"
            ok = self.fail(where, f"{at}: {e.message}")
        return ok

    @staticmethod
    def media_type(content, got):
        """The spec's media type that the answer's Content-Type is: exactly, or without its
        parameters when the spec names none."""
        norm = lambda t: re.sub(r"\s*;\s*", "; ", t.strip().lower())
        for media in content:
            if norm(media) == norm(got):
                return media
        base = norm(got).split(";")[0]
        for media in content:
            if ";" not in media and norm(media) == base:
                return media
        return None

    def fail(self, where, problem):
        self.problems.append(f"{where}: {problem}")
        return False

    def coverage(self, min_errors):
        """Every operation has had a successful answer validated; the errors named were met."""
        for path, method in sorted(spec_operations(self.spec)):
            got = self.validated.get((path, method), set())
            if not any(s.startswith("2") for s in got):
                self.problems.append(f"{method.upper()} {path}: no successful answer was "
                                     f"validated (the test must call every route)")
        seen = {s for statuses in self.validated.values() for s in statuses}
        for status in min_errors:
            if status not in seen:
                self.problems.append(f"no {status} answer was validated")


def check_answers(root, answers_file, min_errors):
    spec = load_spec(root)
    with open(answers_file, encoding="utf-8") as f:
        exchanges = json.load(f)
    a = Answers(spec)
    for x in exchanges:
        a.check(x)
    a.coverage(min_errors)
    for p in a.problems:
        print("FAIL", p)
    for (path, method), statuses in sorted(a.validated.items()):
        print(f"ok   {method.upper():6} {path}: {', '.join(sorted(statuses))}")
    print(f"openapi.answers: {len(exchanges)} answers of {len(a.validated)} operations "
          f"validated against docs/openapi.yaml: "
          f"{'ok' if not a.problems else f'{len(a.problems)} problems'}")
    return 1 if a.problems else 0


def self_test(root):
    """The checks find faults made on purpose (in a copy of the sources)."""
    failures = []

    def expect(output, needles):
        for needle in needles:
            if needle not in output:
                failures.append(f"not reported: {needle!r}")

    with tempfile.TemporaryDirectory() as tmp:
        for rel in ["docs/openapi.yaml", "src/http/front.h", "src/http/console.cpp",
                    "src/api/routes.cpp"]:
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(Path(root) / rel, Path(tmp) / rel)
        routes = Path(tmp) / "src/api/routes.cpp"
        routes.write_text(routes.read_text(encoding="utf-8").replace(
            "\n};", '\n    {R::made_up, "made_up", M::post, "made_up", Access::write, '
                    'Lane::redis},\n};', 1), encoding="utf-8")
        spec = load_spec(tmp)
        del spec["paths"]["/healthz"]
        spec["paths"]["/v1/boards/{board}/nothing"] = spec["paths"]["/v1/boards/{board}/bans"]
        spec["paths"]["/v1/boards/{board}/bans/{member}"]["put"]["security"] = [{"readToken": []}]
        (Path(tmp) / "docs/openapi.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = check_routes(tmp)
        for line in out.getvalue().splitlines():
            print("  (made up) " + line)
        expect(out.getvalue(), [
            "POST /v1/made_up is in the route table", "GET /healthz is served",
            "GET /v1/boards/{board}/nothing is in docs/openapi.yaml but serve has no such route",
            "PUT /v1/boards/{board}/bans/{member}: access admin", "5 problems"])
        failures += [] if status == 1 else ["routes: exit status 0 on faults"]

    ok = {"method": "GET", "path": "/v1/boards/{board}/periods", "target": "/v1/boards/b/periods",
          "status": 200, "headers": {"content-type": "application/json"},
          "body": '{"board": "b", "timezone": "UTC", "periods": []}\n'}
    faults = [
        dict(ok, body='{"board": "b", "timezone": "UTC", "periods": [], "extra": 1}\n'),
        dict(ok, status=401, body='{"error": "no"}\n'),
        dict(ok, status=418),
        dict(ok, headers={"content-type": "text/html"}),
    ]
    a = Answers(load_spec(root))
    for x in [ok] + faults:
        a.check(x)
    expect("\n".join(a.problems), [
        "Additional properties are not allowed ('extra' was unexpected)",
        "header WWW-Authenticate is required and missing", "status 418 is not documented",
        "Content-Type 'text/html' is none of"])
    if len(a.problems) != len(faults) or a.validated != {(ok["path"], "get"): {"200"}}:
        failures.append(f"answers: {len(a.problems)} problems for {len(faults)} faults: "
                        f"{a.problems}")
    for f in failures:
        print("FAIL", f)
    print(f"openapi.self_test: {'ok' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["routes", "answers", "self-test"])
    p.add_argument("file", nargs="?", help="answers: the exchanges (JSON)")
    p.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    p.add_argument("--min-errors", default="400,401,403,404,405",
                   help="answers: statuses that must have been validated at least once")
    args = p.parse_intermixed_args()
    if args.what == "routes":
        return check_routes(args.root)
    if args.what == "self-test":
        return self_test(args.root)
    if not args.file:
        p.error("answers needs the file of exchanges")
    return check_answers(args.root, args.file, [s for s in args.min_errors.split(",") if s])


if __name__ == "__main__":
    sys.exit(main())
