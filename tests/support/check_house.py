#!/usr/bin/env python3
"""The house rules of src/ and tests/ that a reader relies on, checked without a compiler:

1. No Redis command is spelled outside src/hot and src/redis: callers use named functions
   with typed replies (docs/architecture.md, "One home per protocol"). Tests may spell them.
2. No source file (C++, Lua, JavaScript) of src/ or tests/ is longer than MAX_FILE_LINES lines.
3. No function body of src/ or tests/ is longer than MAX_FUNCTION_LINES lines, except the
   tables listed in ALLOWED_LONG (each with its reason). C++: functions at namespace or class
   scope (lambdas count in the function around them; a gtest TEST, TEST_F or TEST_P is named
   Suite.Case); Lua: `function ... end`; JavaScript: functions, methods and arrow functions
   with a block body. In Lua and JavaScript a function inside another counts in the outer
   one, as a lambda does in C++.
4. No file of src/ or tests/ includes <regex>: GCC 12 warns inside std::regex when it is built
   under ASan (-Wmaybe-uninitialized), which fails CI's second, sanitized build only.

Usage: check_house.py <source root>   (exit 1 listing every breach; 0 when the house holds)
       check_house.py --self-test        (the checks find what they are meant to find)
"""
import pathlib
import re
import sys

import script_functions  # Lua and JavaScript (tests/support/script_functions.py)

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 60

# "path:function" -> why it may be longer. Only tables: data written out, not logic.
ALLOWED_LONG = {
    "src/cold/history.cpp:history_statements": "a table: each history statement's name and SQL",
}

# Redis commands (the product's and the common ones): a string literal naming one as the
# first element of an argument list is a command spelled by its caller.
REDIS_COMMANDS = """
APPEND AUTH BITCOUNT BLPOP BRPOP BZPOPMIN BZPOPMAX CLIENT CLUSTER COPY DBSIZE DECR DECRBY DEL
DUMP ECHO EVAL EVALSHA EVAL_RO EVALSHA_RO EXEC EXISTS EXPIRE EXPIREAT EXPIRETIME FCALL
FLUSHALL FLUSHDB FUNCTION GET GETDEL GETEX GETSET HDEL HELLO HEXISTS HGET HGETALL HINCRBY
HINCRBYFLOAT HKEYS HLEN HMGET HMSET HRANDFIELD HSCAN HSET HSETNX HSTRLEN HVALS INCR INCRBY
INFO KEYS LINDEX LLEN LPOP LPUSH LRANGE LREM LSET LTRIM MGET MSET MULTI OBJECT PERSIST
PEXPIRE PEXPIREAT PEXPIRETIME PING PSETEX PTTL PUBLISH RENAME RENAMENX REPLICAOF RESTORE
ROLE RPOP RPUSH SADD SCAN SCARD SCRIPT SDIFF SELECT SET SETEX SETNX SINTER SISMEMBER
SMEMBERS SMISMEMBER SMOVE SPOP SRANDMEMBER SREM SSCAN STRLEN SUNION TIME TOUCH TTL TYPE
UNLINK UNWATCH WAIT WATCH XACK XADD XAUTOCLAIM XCLAIM XDEL XGROUP XINFO XLEN XPENDING
XRANGE XREAD XREADGROUP XREVRANGE XSETID XTRIM ZADD ZCARD ZCOUNT ZINCRBY ZINTERSTORE
ZLEXCOUNT ZMSCORE ZPOPMAX ZPOPMIN ZRANGE ZRANGEBYLEX ZRANGEBYSCORE ZRANGESTORE ZRANK ZREM
ZREMRANGEBYLEX ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREVRANGE ZREVRANGEBYSCORE ZREVRANK ZSCAN
ZSCORE ZUNIONSTORE
""".split()
COMMAND_RE = re.compile(r'(?:\{|\(|Args\s+\w+\s*\{|,)\s*"(' + "|".join(REDIS_COMMANDS) + r')"')
# Places where such a literal is not a Redis command: an HTTP method compared or listed.
HTTP_CONTEXT = re.compile(r"method|http|Allow|route", re.IGNORECASE)


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept), so
    braces and keywords are the code's own."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # a digit separator: 100'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTAINER_RE = re.compile(r"(^|[\s;}])(namespace|class|struct|union|enum)\b[^()]*$|extern\s*\"\"\s*$", re.S)
INIT_BRACE_RE = re.compile(r"\)\s*(noexcept\s*)?:.*[\w>]\s*$", re.S)


GTEST_RE = re.compile(r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")


def function_name(header):
    """The name a function's header gives it: Suite.Case for a gtest test, else the first
    name called as a function."""
    test = GTEST_RE.search(header)
    if test:
        return f"{test.group(1)}.{test.group(2)}"
    name = re.findall(r"([~\w:]+|operator\s*\S+)\s*\(", header)
    return name[0] if name else "?"


def functions(code):
    """(name, first line, body lines) of every function defined at namespace or class scope;
    lambdas and local classes count as part of the function around them."""
    stack = []  # kinds: container, function, init, data
    header = []
    line = 1
    found = []
    for c in code:
        if c == "\n":
            line += 1
        at_scope = all(k == "container" for k, _, _ in stack)
        if c == "{":
            if at_scope:
                h = "".join(header)
                tail = h.strip()
                if CONTAINER_RE.search(tail):
                    stack.append(("container", line, ""))
                    header = []
                elif "(" in tail and INIT_BRACE_RE.search(tail):
                    stack.append(("init", line, ""))
                    header.append(c)
                elif "(" in tail and not tail.rstrip().endswith("="):
                    stack.append(("function", line, function_name(tail)))
                    header = []
                else:
                    stack.append(("data", line, ""))
                    header = []
            else:
                stack.append(("inner", line, ""))
            continue
        if c == "}":
            if not stack:
                continue
            kind, start, name = stack.pop()
            if kind == "function":
                found.append((name, start, line - start + 1))
                header = []
            elif kind == "init":
                header.append(c)
            elif kind in ("container", "data") and all(k == "container" for k, _, _ in stack):
                header = []
            continue
        if at_scope:
            if c == ";":
                header = []
            else:
                header.append(c)
    return found


def functions_of(path, text):
    """(name, first line, lines) of the functions of a C++, Lua or JavaScript source."""
    if path.suffix == ".lua":
        return script_functions.lua_functions(script_functions.strip_lua(text))
    if path.suffix == ".js":
        return script_functions.js_functions(script_functions.strip_js(text))
    return functions(strip_code(text))


def sources(root):
    """(path, path relative to root) of every C++, Lua and JavaScript source of src/ and
    tests/ (npm's node_modules, where one is installed in the tree, is not ours)."""
    for top in ("src", "tests"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix in (".cpp", ".h", ".lua", ".js") and "node_modules" not in path.parts:
                yield path, path.relative_to(root).as_posix()


def breaches(root):
    problems = []
    for path, rel in sources(root):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}): split it by concern")
        if path.suffix in (".cpp", ".h"):
            if rel.startswith("src/"):
                problems += spelled_commands(rel, text)
            problems += includes_regex(rel, text)
        for name, start, length in functions_of(path, text):
            if length > MAX_FUNCTION_LINES and f"{rel}:{name}" not in ALLOWED_LONG:
                problems.append(
                    f"{rel}:{start}: {name} is {length} lines (at most {MAX_FUNCTION_LINES}): read it as named steps")
    return problems


def spelled_commands(rel, text):
    if rel.startswith(("src/hot/", "src/redis/")):
        return []
    problems = []
    for number, source in enumerate(text.splitlines(), 1):
        code = source.split("//")[0]
        for m in COMMAND_RE.finditer(code):
            if HTTP_CONTEXT.search(code):
                continue
            problems.append(f"{rel}:{number}: spells the Redis command {m.group(1)}: call a named function of src/hot")
    return problems


REGEX_INCLUDE = re.compile(r"^\s*#\s*include\s*<regex>", re.MULTILINE)


def includes_regex(rel, text):
    return [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: includes <regex>: scan by hand "
            "(GCC 12 warns inside std::regex under ASan)" for m in REGEX_INCLUDE.finditer(text)]


def self_test():
    """Checks the checker on a made-up tree: each breach found, nothing else."""
    import tempfile

    long_body = "\n".join(f"  x += {i};" for i in range(MAX_FUNCTION_LINES))
    files = {
        "src/service/spells.cpp": 'void f(C& c) {\n  c.command({"ZADD", key, "1", m});\n}\n'
        '// c.command({"DEL", key}) in a comment is fine\n'
        'bool g(const R& r) { return r.method == "GET"; }\n',
        "src/hot/allowed.cpp": 'void f(C& c) { c.command({"ZADD", key}); }\n',
        "src/core/long.cpp": "namespace n {\nint long_one(int x) {\n" + long_body + "\n  return x;\n}\n"
        "const int table[] = {\n" + "\n".join(f"  {i}," for i in range(80)) + "\n};\n"
        "struct S {\n  S(int a) : a_{a}, b_(a) {\n    auto l = [&] { return a_; };\n    (void)l;\n  }\n"
        "  int a_, b_;\n};\n}  // namespace n\n",
        "src/core/big.h": "// big\n" + "int v;\n" * (MAX_FILE_LINES + 1),
        "tests/core/scan_test.cpp": "// no <regex> in a comment\n#include <string>\n#include <regex>\n",
        # tests/ keeps the file and function limits too (a test is named Suite.Case); a table of
        # cases at namespace scope is data; a test may spell a Redis command.
        "tests/deploy/big.js": "// big\n" + "x = 1;\n" * (MAX_FILE_LINES + 1),
        "tests/integration/long_test.cpp": "namespace {\nconst Case kCases[] = {\n"
        + "\n".join(f"  {{{i}, {i + 1}}}," for i in range(80)) + "\n};\n}  // namespace\n"
        "TEST_F(LongTest, ReadsAsOneBlock) {\n  redis.command({\"ZADD\", key, \"1\", m});\n" + long_body
        + "\n}\nTEST(LongTest, Short) {\n  for (const Case& c : kCases) EXPECT_EQ(c.a + 1, c.b);\n}\n",
        "src/hot/big.lua": "-- big\n" + "x = 1\n" * (MAX_FILE_LINES + 1),
        # Lua: keywords in comments and strings are not code; a data table is no function; a
        # nested function counts in its outer one; repeat ... until has no end.
        "src/hot/long.lua": "--[[ function g()\nend ]] -- function f() end\nlocal T = {\n"
        + "\n".join(f"  {i}," for i in range(80)) + "\n}\nlocal function long_one(x)\n"
        "  local s, t = [[ end\nend function ]], 'end' .. \"function\"\n"
        "  local inner = function(y) return y end\n  if x then x = 1 end\n"
        "  for i = 1, 2 do x = x + i end\n  repeat x = x - 1 until x < 0\n"
        + "\n".join(f"  x = x + {i}" for i in range(MAX_FUNCTION_LINES - 8)) + "\n  return x\nend\n"
        "local function short() return 1 end\n",
        # JavaScript: braces in a regular expression, strings and template text are not code; a
        # data object is no function; an arrow function and a method with block bodies are.
        "src/console/long.js": "const re = /[{}]/g;\nconst s = \"function () {\";\n"
        "const tpl = `${s} { ${ {a: 1}.a } }`;\nconst T = {\n"
        + "\n".join(f"  k{i}: {i}," for i in range(80)) + "\n};\nconst longArrow = (x) => {\n"
        + "\n".join(f"  x += {i};" for i in range(MAX_FUNCTION_LINES - 2)) + "\n  return x;\n};\n"
        "class C {\n  method(a) {\n    if (a) {\n      a = [1].map((v) => { return v; });\n    }\n"
        + "\n".join(f"    a += {i};" for i in range(MAX_FUNCTION_LINES - 4)) + "\n  }\n}\n"
        "const short = (y) => y + 1;\nfunction named() { return [1].map((v) => { return v; }); }\n",
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            path = pathlib.Path(d, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        found = breaches(pathlib.Path(d))
    expected = [
        f"src/console/long.js:86: longArrow is {MAX_FUNCTION_LINES + 1} lines",
        f"src/console/long.js:148: method is {MAX_FUNCTION_LINES + 1} lines",
        f"src/core/big.h: {MAX_FILE_LINES + 2} lines",
        f"src/core/long.cpp:2: long_one is {MAX_FUNCTION_LINES + 3} lines",
        f"src/hot/big.lua: {MAX_FILE_LINES + 2} lines",
        f"src/hot/long.lua:85: long_one is {MAX_FUNCTION_LINES + 1} lines",
        "src/service/spells.cpp:2: spells the Redis command ZADD",
        "tests/core/scan_test.cpp:3: includes <regex>",
        f"tests/deploy/big.js: {MAX_FILE_LINES + 2} lines",
        f"tests/integration/long_test.cpp:85: LongTest.ReadsAsOneBlock is {MAX_FUNCTION_LINES + 3} lines",
    ]
    ok = len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected))
    print("\n".join(found))
    print("self-test " + ("passed" if ok else "FAILED: expected breaches starting " + repr(expected)))
    return 0 if ok else 1


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    problems = breaches(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "."))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} breaches of the house rules (tests/support/check_house.py)")
        return 1
    print("the house rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
