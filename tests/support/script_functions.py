"""The functions of Lua and JavaScript sources, found without an interpreter, for the house
check (check_house.py): (name, first line, lines) of every function not inside another one,
so that a function inside another counts in the outer one, as a lambda does in C++.

Comments and string literals are blanked first (newlines kept), so keywords and braces are
the code's own. Lua: `function ... end`, with `if`, `do` (of `for` and `while` too) closing
at `end` and `repeat ... until` not. JavaScript: a `{` opens a function when an arrow `=>`,
a `function` header or a method header (`name(...)`, not `if (...)`) comes before it.
"""
import re

# --- Lua ------------------------------------------------------------------------------------

LONG_BRACKET = re.compile(r"\[(=*)\[")


def blank(text):
    return re.sub(r"[^\n]", " ", text)


def quoted(text, i, out):
    """Appends the one-line string literal that starts at text[i] blanked; returns the index
    after it."""
    c, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != c and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    out.append(c + blank(text[i + 1 : j]) + c)
    return j + 1


def strip_lua(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            m = LONG_BRACKET.match(text, i + 2)
            if m:
                end = text.find("]" + m.group(1) + "]", m.end())
                j = n if end < 0 else end + len(m.group(0))
                out.append(blank(text[i:j]))
            else:
                j = text.find("\n", i)
                j = n if j < 0 else j
            i = j
        elif c == "[" and LONG_BRACKET.match(text, i):
            m = LONG_BRACKET.match(text, i)
            end = text.find("]" + m.group(1) + "]", m.end())
            j = n if end < 0 else end + len(m.group(0))
            out.append('""' + blank(text[i + 2 : j]))
            i = j
        elif c in "\"'":
            i = quoted(text, i, out)
        else:
            out.append(c)
            i += 1
    return "".join(out)


LUA_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LUA_NAMED = re.compile(r"\s*([A-Za-z_][\w.:]*)\s*\(")
LUA_ASSIGNED = re.compile(r"([A-Za-z_][\w.]*|\[[^\]]*\])\s*=\s*$")


def lua_functions(code):
    stack = []  # (kind, line, name): kind "function" or "block"
    found = []
    line = 1
    last = 0
    for m in LUA_WORD.finditer(code):
        line += code.count("\n", last, m.start())
        last = m.start()
        word = m.group(0)
        if word == "function":
            named = LUA_NAMED.match(code, m.end())
            if named:
                name = named.group(1)
            else:
                assigned = LUA_ASSIGNED.search(code, max(0, m.start() - 200), m.start())
                name = assigned.group(1) if assigned else "function"
            stack.append(("function", line, name))
        elif word in ("if", "do"):
            stack.append(("block", line, ""))
        elif word == "end" and stack:
            kind, start, name = stack.pop()
            if kind == "function" and all(k != "function" for k, _, _ in stack):
                found.append((name, start, line - start + 1))
    return found


# --- JavaScript -----------------------------------------------------------------------------

# After these a "/" starts a regular expression literal, not a division.
REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_KEYWORDS = ("return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await")


def regex_may_start(out):
    prev = "".join(out[-40:]).rstrip()
    if not prev or prev[-1] in REGEX_BEFORE:
        return True
    return any(re.search(r"(^|[^\w$])" + k + "$", prev) for k in REGEX_KEYWORDS)


def skip_regex(text, i):
    """The index after the regular expression literal that starts at text[i] ("/")."""
    j, n, in_class = i + 1, len(text), False
    while j < n and text[j] != "\n":
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            j += 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            return j
        j += 1
    return j


def strip_js(text):
    out = []
    i, n = 0, len(text)
    templates = []  # brace depth of each open template's ${ ... } expression
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j]))
            i = j
        elif c == "/" and regex_may_start(out):
            j = skip_regex(text, i)
            out.append('""' + blank(text[i + 2 : j]) if j - i >= 2 else '""')
            i = j
        elif c in "\"'":
            i = quoted(text, i, out)
        elif c == "`" or (c == "}" and templates and templates[-1] == 0):
            # Template text up to its end or the next ${ (whose code is kept).
            if c == "}":
                templates.pop()
            j = i + 1
            while j < n and text[j] != "`" and not text.startswith("${", j):
                j += 2 if text[j] == "\\" else 1
            if text.startswith("${", j):
                templates.append(0)
                out.append("`" + blank(text[i + 1 : j]) + "  ")
                i = j + 2
            else:
                out.append("`" + blank(text[i + 1 : j]) + "`")
                i = j + 1
        else:
            if templates and c == "{":
                templates[-1] += 1
            elif templates and c == "}":
                templates[-1] -= 1
            out.append(c)
            i += 1
    return "".join(out)


JS_CONTROL = {"if", "for", "while", "switch", "catch", "with", "function"}
JS_ARROW_NAME = re.compile(r"([\w$]+)\s*[=:]\s*(async\s*)?(\([^()]*\)|[\w$]+)\s*=>\s*$")
JS_FUNCTION_NAME = re.compile(r"function\s*\*?\s*([\w$]*)\s*$")


def opening_paren(code, close):
    """The index of the "(" matching the ")" at code[close], or -1."""
    depth = 0
    for k in range(close, -1, -1):
        if code[k] == ")":
            depth += 1
        elif code[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def js_brace_kind(code, brace):
    """("function", name) when the "{" at code[brace] opens a function body, else ("block", "")."""
    before = code[max(0, brace - 400) : brace].rstrip()
    if before.endswith("=>"):
        m = JS_ARROW_NAME.search(before)
        return "function", m.group(1) if m else "arrow function"
    if not before.endswith(")"):
        return "block", ""
    start = opening_paren(code, len(code[:brace].rstrip()) - 1)
    head = code[max(0, start - 200) : start].rstrip() if start > 0 else ""
    m = JS_FUNCTION_NAME.search(head)
    if m:
        if m.group(1):
            return "function", m.group(1)
        assigned = re.search(r"([\w$]+)\s*[=:]\s*(async\s+)?function\s*\*?\s*$", head)
        return "function", assigned.group(1) if assigned else "function"
    word = re.search(r"([\w$]+)\s*$", head)
    if word and word.group(1) not in JS_CONTROL and not re.search(r"\.\s*[\w$]+\s*$", head):
        return "function", word.group(1)
    return "block", ""


def js_functions(code):
    stack = []  # (kind, line, name)
    found = []
    line = 1
    for k, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            kind, name = js_brace_kind(code, k)
            stack.append((kind, line, name))
        elif c == "}" and stack:
            kind, start, name = stack.pop()
            if kind == "function" and all(s != "function" for s, _, _ in stack):
                found.append((name, start, line - start + 1))
    return found
