"""Boolean functions from a Python-like expression over x0..x{n-1}, e.g. `x0 ^ x3 | maj(x1, x2, x4)`.

A small hand-written tokenizer and recursive-descent parser (nothing is `eval`-ed). Grammar, loosest first,
with Python's precedence:

    expr   := conj ('or' conj)*
    conj   := neg ('and' neg)*
    neg    := 'not' neg | bor
    bor    := bxor ('|' bxor)*
    bxor   := band ('^' band)*
    band   := unary ('&' unary)*
    unary  := '~' unary | '!' unary | atom
    atom   := 0 | 1 | xK | '(' expr ')' | FUNC '(' args ')'

FUNC is one of maj/majority (ties → 1, as the zoo's majority), parity/xor, and, or, not, thr(t, ...) = [Σ ≥ t].
Values are 0/1 uint8 arrays, so one compiled expression evaluates on all 2^n inputs at once (from per-bit
tables) or on a (B, n) batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from learnability.boolean.functions import BooleanFunction, bit_table
from learnability.errors import UserError

FUNCTIONS = ("maj", "majority", "parity", "xor", "and", "or", "not", "thr")
_SYMBOLS = "^|&~!(),"
# ASCII only: str.isdigit() also accepts '٣' or '²', which must not silently become variable indices
_DIGITS = frozenset("0123456789")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD = _WORD_START | _DIGITS
_VARIABLE = re.compile(r"x(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class Token:
    kind: str  # "name", "num", a symbol character, or "end"
    text: str
    col: int  # 1-based column in the expression


@dataclass(frozen=True)
class Node:
    op: str  # "var", "const", "not", "and", "or", "xor", "maj", "thr"
    args: tuple[Node, ...] = ()
    value: int = 0  # variable index, constant, or threshold


class ExpressionError(UserError):
    pass


def _fail(source: str, col: int, message: str) -> ExpressionError:
    return ExpressionError(f"malformed expression {source!r} at column {col}: {message}")


def tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        ch = source[pos]
        if ch.isspace():
            pos += 1
        elif ch in _WORD_START:
            end = pos
            while end < len(source) and source[end] in _WORD:
                end += 1
            tokens.append(Token("name", source[pos:end], pos + 1))
            pos = end
        elif ch in _DIGITS:
            end = pos
            while end < len(source) and source[end] in _DIGITS:
                end += 1
            tokens.append(Token("num", source[pos:end], pos + 1))
            pos = end
        elif ch in _SYMBOLS:
            tokens.append(Token(ch, ch, pos + 1))
            pos += 1
        else:
            raise _fail(
                source,
                pos + 1,
                f"unexpected character {ch!r}; allowed: x0.., 0, 1, ^ | & ~ not and or ( ), {', '.join(FUNCTIONS)}",
            )
    tokens.append(Token("end", "", len(source) + 1))
    return tokens


class _Parser:
    def __init__(self, source: str, n: int):
        self.source, self.n = source, n
        self.tokens = tokenize(source)
        self.pos = 0

    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def take(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def is_word(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "name" and tok.text == word

    def expect(self, kind: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            found = "the end" if tok.kind == "end" else repr(tok.text)
            raise _fail(self.source, tok.col, f"expected {what}, found {found}")
        return self.take()

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise _fail(self.source, 1, "the expression is empty")
        node = self.expr()
        tok = self.peek()
        if tok.kind != "end":
            raise _fail(
                self.source, tok.col, f"unexpected {tok.text!r} after a complete expression"
            )
        return node

    def _chain(self, op: str, sub: Callable[[], Node], is_op: Callable[[], bool]) -> Node:
        args = [sub()]
        while is_op():
            self.take()
            args.append(sub())
        return args[0] if len(args) == 1 else Node(op, tuple(args))

    def expr(self) -> Node:
        return self._chain("or", self.conj, lambda: self.is_word("or"))

    def conj(self) -> Node:
        return self._chain("and", self.neg, lambda: self.is_word("and"))

    def neg(self) -> Node:
        if self.is_word("not"):
            self.take()
            return Node("not", (self.neg(),))
        return self.bor()

    def bor(self) -> Node:
        return self._chain("or", self.bxor, lambda: self.peek().kind == "|")

    def bxor(self) -> Node:
        return self._chain("xor", self.band, lambda: self.peek().kind == "^")

    def band(self) -> Node:
        return self._chain("and", self.unary, lambda: self.peek().kind == "&")

    def unary(self) -> Node:
        if self.peek().kind in ("~", "!"):
            self.take()
            return Node("not", (self.unary(),))
        return self.atom()

    def atom(self) -> Node:
        tok = self.peek()
        if tok.kind == "num":
            self.take()
            if tok.text not in ("0", "1"):
                raise _fail(
                    self.source,
                    tok.col,
                    f"constant {tok.text} is not allowed; constants are 0 and 1",
                )
            return Node("const", value=int(tok.text))
        if tok.kind == "(":
            self.take()
            node = self.expr()
            self.expect(")", "')'")
            return node
        if tok.kind == "name":
            if tok.text in FUNCTIONS and self.peek(1).kind == "(":
                return self.call()
            if tok.text.startswith("x") and tok.text[1:] and set(tok.text[1:]) <= _DIGITS:
                if not _VARIABLE.fullmatch(tok.text):
                    raise _fail(
                        self.source, tok.col,
                        f"variable {tok.text!r} has a leading zero; write x{int(tok.text[1:])}",
                    )  # fmt: skip
                self.take()
                k = int(tok.text[1:])
                if k >= self.n:
                    raise UserError(
                        f"variable {tok.text} (column {tok.col}) in {self.source!r} is outside "
                        f"x0..x{self.n - 1} for n={self.n}"
                    )
                return Node("var", value=k)
            raise _fail(
                self.source, tok.col,
                f"unknown name {tok.text!r}; allowed: variables x0..x{self.n - 1}, 0, 1, "
                f"and functions {', '.join(FUNCTIONS)} followed by '('",
            )  # fmt: skip
        found = "the end" if tok.kind == "end" else repr(tok.text)
        raise _fail(
            self.source, tok.col, f"expected a variable, constant, '(' or function, found {found}"
        )

    def call(self) -> Node:
        name = self.take()
        self.take()  # "("
        threshold = None
        if name.text == "thr":
            num = self.expect("num", "an integer threshold as thr's first argument")
            threshold = int(num.text)
            self.expect(",", "',' after the threshold")
        args = [self.expr()]
        while self.peek().kind == ",":
            self.take()
            args.append(self.expr())
        self.expect(")", f"',' or ')' in {name.text}(...)")
        op = {"maj": "maj", "majority": "maj", "parity": "xor", "xor": "xor"}.get(
            name.text, name.text
        )
        if op == "not" and len(args) != 1:
            raise _fail(self.source, name.col, f"not(...) takes one argument, got {len(args)}")
        if op == "thr":
            assert threshold is not None
            if threshold > len(args):
                raise _fail(
                    self.source, name.col,
                    f"thr threshold {threshold} exceeds its {len(args)} arguments; it must be in 0..{len(args)}",
                )  # fmt: skip
            return Node("thr", tuple(args), value=threshold)
        return Node(op, tuple(args))


MAX_EXPRESSION = 100_000  # characters: far beyond a hand-written formula


def parse(source: str, n: int) -> Node:
    """Parse an expression over x0..x{n-1}; raises UserError with the column on malformed input."""
    if len(source) > MAX_EXPRESSION:
        raise ExpressionError(
            f"expression of {len(source)} characters is too long; at most {MAX_EXPRESSION}"
        )
    try:
        return _Parser(source, n).parse()
    except RecursionError:  # the parser recurses once per nesting level
        raise ExpressionError(
            f"expression {source[:40]!r}... nests too deeply; use fewer parentheses, "
            "or maj/parity/and/or(...) over many arguments"
        ) from None


def evaluate(node: Node, var: Callable[[int], np.ndarray], size: int) -> np.ndarray:
    """Evaluate on arrays: `var(k)` gives x_k as a 0/1 uint8 array of length `size`."""
    op = node.op
    if op == "var":
        return var(node.value)
    if op == "const":
        return np.full(size, node.value, dtype=np.uint8)
    vals = [evaluate(a, var, size) for a in node.args]
    if op == "not":
        return np.bitwise_xor(vals[0], 1)
    if op in ("and", "or", "xor"):
        ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        out = np.array(vals[0], dtype=np.uint8, copy=True)
        for v in vals[1:]:
            ufunc(out, v, out=out)
        return out
    total = np.zeros(size, dtype=np.int16)
    for v in vals:
        total += v
    if op == "maj":
        return (2 * total >= len(vals)).astype(np.uint8)
    return (total >= node.value).astype(np.uint8)  # thr


def expression_function(source: str, n: int) -> BooleanFunction:
    """A BooleanFunction from an expression; tabulates from per-bit tables, evaluates batches column-wise."""
    tree = parse(source, n)

    def table(m: int) -> np.ndarray:
        return evaluate(tree, lambda k: bit_table(m, k), 1 << m)

    def fn(x: np.ndarray) -> np.ndarray:
        return evaluate(tree, lambda k: x[:, k], x.shape[0])

    return BooleanFunction(n, source.strip(), fn=fn, table_fn=table, params={"expression": source})
