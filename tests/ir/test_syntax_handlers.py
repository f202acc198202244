"""The grammar and its Transformer agree: every rule (or alias) the grammar hands to the Transformer has a
handler (else lark would pass a raw Tree to the builder), and every handler names a rule (else it is dead code
left from a renamed rule)."""
from __future__ import annotations

from ir.syntax_parser import grammar_rule_names, transformer_handlers


def test_every_grammar_rule_has_a_transformer_handler():
    assert sorted(grammar_rule_names() - transformer_handlers()) == []


def test_every_transformer_handler_names_a_grammar_rule():
    assert sorted(transformer_handlers() - grammar_rule_names()) == []
