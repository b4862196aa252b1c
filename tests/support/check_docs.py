#!/usr/bin/env python3
"""Checks the README and docs/*.md: every relative link resolves, and every CLI flag they show
for boardkeeper exists in that command's --help.

Usage: check_docs.py --binary PATH/TO/boardkeeper [--root REPO] [FILE.md ...]

Links: every [text](target) outside code whose target is not a URL (http:, https:, mailto:)
must name an existing file or directory, relative to the Markdown file, and a #anchor must be
a heading of the target Markdown file (GitHub's slugs: lower case, punctuation dropped,
spaces as hyphens, -1, -2 ... for repeats).

Flags: a long flag (--something), and after a command word a short one (-n), is checked
where it is shown for boardkeeper:
- in a fenced code block, on a line that runs boardkeeper (a token `boardkeeper`, a path
  ending in /boardkeeper, or an image `boardkeeper:TAG`): the flags after it, up to a pipe,
  `&&`, `;` or `#`, must be in `boardkeeper --help` or, after a command word, in
  `boardkeeper <command> --help`. In a synopsis block (its first line starts with
  `boardkeeper [`), an indented line that starts with a command word switches to it;
- in inline code that starts with `boardkeeper` or with a command word followed by a flag
  (`tick --dry-run`): the same rule;
- in inline code that is a bare flag (`--chunk`): it must be a flag of some boardkeeper
  command, unless the paragraph is about another program (it shows inline code starting with
  one of OTHER_PROGRAMS), whose flags are not ours to check.
Copies: a fenced code block right after a line `<!-- copy of PATH -->` must equal the file
PATH (relative to the Markdown file) line for line, so that a program a page shows is the one
the tests run (the README's reward consumer: docs/examples/reward_consumer.py).
Exit 0 when everything holds, 1 with one line per problem (FILE:LINE: what is wrong) otherwise,
2 on a usage error (no binary, a file that cannot be read).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

FLAG = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*")
SHORT = re.compile(r"(?:^|(?<=[\s\[]))(-[A-Za-z])(?=[\s\]]|$)")
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE = re.compile(r"`([^`\n]+)`")
STOP_TOKENS = {"|", "||", "&&", ";", "#", ">", "2>", "&"}
OTHER_PROGRAMS = {
    "bk_bench", "bk_serve_bench", "bk_config_bench", "tests/bench/run.sh", "tests/run.sh",
    "docker", "podman", "kubectl", "ctest", "cmake", "redis-cli", "redis-server", "wrk",
    "curl", "npm", "node", "python3", "systemctl", "systemd-analyze", "debootstrap", "psql",
}


class Help:
    """The flags `boardkeeper --help` and each `boardkeeper <command> --help` list."""

    def __init__(self, binary):
        top = self._run(binary, ["--help"])
        self.global_flags = self._flags(top)
        names = self._command_names(top)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            helps = pool.map(lambda name: self._run(binary, [name, "--help"]), names)
            self.commands = {name: self._flags(text) for name, text in zip(names, helps)}
        if not self.commands:
            raise SystemExit(f"check_docs: {binary} --help lists no commands")
        self.all_flags = set(self.global_flags)
        for flags in self.commands.values():
            self.all_flags |= flags

    @staticmethod
    def _flags(text):
        """Long flags anywhere in the help; short ones where an option line starts."""
        flags = set(FLAG.findall(text))
        for line in text.splitlines():
            m = re.match(r"\s+(-[A-Za-z])\b", line)
            if m:
                flags.add(m.group(1))
        return flags

    @staticmethod
    def _run(binary, args):
        try:
            done = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise SystemExit(f"check_docs: cannot run {binary}: {e}")
        return done.stdout + done.stderr

    @staticmethod
    def _command_names(top):
        # CLI11 lists them under "SUBCOMMANDS:", one per line, the name first.
        names, inside = [], False
        for line in top.splitlines():
            if line.strip().upper().startswith("SUBCOMMANDS"):
                inside = True
                continue
            if inside:
                m = re.match(r"^\s+([a-z][a-z-]*)\b", line)
                if m:
                    names.append(m.group(1))
                elif line.strip() and not line.startswith(" "):
                    inside = False
        return names

    def allowed(self, command):
        if command is None:
            return self.global_flags
        return self.global_flags | self.commands[command]


def slug(heading, seen):
    text = re.sub(r"`", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    text = text.replace(" ", "-")
    n = seen.get(text, 0)
    seen[text] = n + 1
    return text if n == 0 else f"{text}-{n}"


def split_code(lines):
    """Yields (line number, text, in_code_block, fence_index) for each line."""
    in_code, block = False, -1
    for i, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_code = not in_code
            if in_code:
                block += 1
            yield i, line, True, block
            continue
        yield i, line, in_code, block


def anchors_of(path, cache):
    if path not in cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            for _, line, in_code, _ in split_code(f.read().splitlines()):
                m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
                if m and not in_code:
                    found.add(slug(m.group(2), seen))
        cache[path] = found
    return cache[path]


def check_links(path, lines, problems, cache):
    # Code is no link: blank fenced blocks and inline code, keeping line numbers.
    kept = []
    for _, line, in_code, _ in split_code(lines):
        kept.append("" if in_code else INLINE.sub(lambda m: " " * len(m.group(0)), line))
    text = "\n".join(kept)
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    for m in LINK.finditer(text):
        target = m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        line_no = text.count("\n", 0, m.start()) + 1
        file_part, _, anchor = target.partition("#")
        resolved = path if not file_part else os.path.normpath(
            os.path.join(os.path.dirname(path), file_part))
        if not os.path.exists(resolved):
            problems.append(f"{path}:{line_no}: link to {target}: {resolved} does not exist")
            continue
        if anchor and resolved.endswith(".md"):
            if anchor not in anchors_of(resolved, cache):
                problems.append(f"{path}:{line_no}: link to {target}: no heading #{anchor} in "
                                f"{resolved}")


def is_invocation(token):
    return re.fullmatch(r"(\S*/)?boardkeeper(:\S+)?", token.strip("\"'")) is not None


def check_command(tokens, help_, where, problems, command=None):
    """tokens follow a boardkeeper invocation; command: the command word already known."""
    started = False
    for tok in tokens:
        if tok in STOP_TOKENS or tok.startswith("#"):
            break
        if command is None and tok in help_.commands:
            command, started = tok, True
            continue
        bare = tok.strip("[]")
        flags = FLAG.findall(tok) if tok.startswith("-") or tok.startswith("[") else []
        if command is not None and re.fullmatch(r"-[A-Za-z]", bare):
            flags = [bare]
        if not flags:
            if not started:
                return  # `boardkeeper` as a word (a user, a file name): no invocation
            continue
        started = True
        for flag in flags:
            if flag not in help_.allowed(command):
                said = f"boardkeeper {command} --help" if command else "boardkeeper --help"
                problems.append(f"{where}: {flag} is not in `{said}`")


def tokens_of(line):
    return re.findall(r"\[?[^\s\[\]]+\]?|\[|\]", line)


def check_code_line(line, help_, where, problems):
    line = re.sub(r"^\s*\$\s+", "", line)
    tokens = tokens_of(line)
    for i, tok in enumerate(tokens):
        if is_invocation(tok):
            check_command(tokens[i + 1:], help_, where, problems)


def check_code_blocks(path, lines, help_, problems):
    synopsis_block, command = None, None
    pending = ""  # a code line continued with a backslash
    for i, line, in_code, _ in split_code(lines):
        if not in_code:
            continue
        where = f"{path}:{i}"
        if FENCE.match(line):
            synopsis_block, command, pending = None, None, ""
            continue
        if synopsis_block is None:
            synopsis_block = line.lstrip().startswith("boardkeeper [")
        if synopsis_block:
            m = re.match(r"^\s+([a-z][a-z-]*)\b", line)
            if m and m.group(1) in help_.commands:
                command = m.group(1)
            shown = line.split("   ")[0] if command else line
            shorts = SHORT.findall(shown) if command else []
            for flag in FLAG.findall(shown) + shorts:
                if flag not in help_.allowed(command):
                    problems.append(f"{where}: {flag} is not in `boardkeeper "
                                    f"{command + ' ' if command else ''}--help`")
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        check_code_line(pending + line, help_, where, problems)
        pending = ""


COPY_OF = re.compile(r"^<!--\s*copy of\s+(\S+)\s*-->\s*$")


def check_copies(path, lines, problems):
    """Each block marked `<!-- copy of PATH -->` equals that file."""
    for i, line in enumerate(lines):
        m = COPY_OF.match(line)
        if not m:
            continue
        where, target = f"{path}:{i + 1}", m.group(1)
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            problems.append(f"{where}: no code block right after the copy of {target}")
            continue
        end = next((j for j in range(i + 2, len(lines)) if FENCE.match(lines[j])), len(lines))
        try:
            with open(resolved, encoding="utf-8") as f:
                want = f.read().splitlines()
        except OSError as e:
            problems.append(f"{where}: copy of {target}: {e.strerror}")
            continue
        shown = lines[i + 2:end]
        if shown != want:
            at = next((k for k, (a, b) in enumerate(zip(shown, want)) if a != b),
                      min(len(shown), len(want)))
            problems.append(f"{where}: the block is no copy of {target}: they differ at its "
                            f"line {at + 1}")


def paragraphs(lines):
    """(first line number, text) of each run of prose lines: split at blank lines, headings,
    list items and code blocks, so that inline code may run over a line break."""
    first, run = None, []
    for i, line, in_code, _ in split_code(lines):
        breaks = (in_code or not line.strip() or line.startswith("#")
                  or re.match(r"^\s*([-*]|\d+\.)\s", line))
        if breaks and run:
            yield first, "\n".join(run)
            first, run = None, []
        if in_code or not line.strip():
            continue
        if first is None:
            first = i
        run.append(line)
    if run:
        yield first, "\n".join(run)


def check_inline(path, lines, help_, problems):
    for first, text in paragraphs(lines):
        spans = [(first + text.count("\n", 0, m.start()), m.group(1).replace("\n", " "))
                 for m in re.finditer(r"`([^`]+)`", text)]
        other = any(s.split() and s.split()[0] in OTHER_PROGRAMS for _, s in spans)
        for line_no, span in spans:
            where, tokens = f"{path}:{line_no}", tokens_of(span)
            if not tokens:
                continue
            if is_invocation(tokens[0]):
                check_command(tokens[1:], help_, where, problems)
            elif (tokens[0] in help_.commands and len(tokens) > 1
                  and tokens[1].lstrip("[").startswith("-")):
                check_command(tokens[1:], help_, where, problems, command=tokens[0])
            elif tokens[0].startswith("--") and not other:
                flag = FLAG.match(tokens[0])
                if flag and flag.group(0) not in help_.all_flags:
                    problems.append(f"{where}: {flag.group(0)} is no flag of any boardkeeper "
                                    "command (`boardkeeper <command> --help`)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the boardkeeper binary whose --help counts")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                    help="the repository (default: this script's ../..)")
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md, docs/*.md)")
    args = ap.parse_args()
    root = os.path.normpath(args.root)
    files = args.files or [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
        if f.endswith(".md"))
    if not os.access(args.binary, os.X_OK):
        print(f"check_docs: {args.binary} is not an executable", file=sys.stderr)
        return 2
    help_ = Help(args.binary)
    problems, cache = [], {}
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            print(f"check_docs: cannot read {path}: {e}", file=sys.stderr)
            return 2
        check_links(path, lines, problems, cache)
        check_code_blocks(path, lines, help_, problems)
        check_inline(path, lines, help_, problems)
        check_copies(path, lines, problems)
    problems.sort(key=lambda p: (p.split(":")[0], int(p.split(":")[1])))
    for p in problems:
        print(p)
    print(f"check_docs: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
