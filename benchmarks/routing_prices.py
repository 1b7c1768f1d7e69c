"""Public list prices of the models in the routing judgments (``mt_bench_routing.py``), and
what an answer costs at them.

Each price is a named provider's public list price, in US dollars per million input and
output tokens, for the model itself (Claude, Gemini) or, for an open-weight model, for the
model it derives from: a fine-tune is priced as its base served by that provider, and a
variant (GRIFFIN's sparse activation) as the model it varies, an assumption (docs/
benchmarks.md, "Routing that pays on real judged traffic", gives the sources). The prices
are read from pydantic/genai-prices (MIT), ``prices/providers/<provider>.yml`` at commit
47df840a5ab10bbcffb8e5ac01b9899032245d1b, a maintained table of providers' list prices.

Two costs of an answer:

- ``round_cost``: the service's own ``estimated_cost_per_round`` of the declared prices,
  ``(4000 x input + 1500 x output) / 1e6``, the same for every answer of a model (what
  routing compares);
- ``answer_cost``: an estimate from the answer itself: the characters the model was sent
  and wrote, at ``CHARS_PER_TOKEN`` characters a token, at its prices. A constant
  characters-per-token cancels in every ratio of two costs; what it keeps is that a
  model's long answers cost more than its short ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentladder.domain.agents import round_cost

__all__ = ["CHARS_PER_TOKEN", "PRICES", "Price", "answer_cost", "round_cost"]

CHARS_PER_TOKEN = 4.0
"""English text in a BPE tokenizer: about 4 characters a token (it cancels in ratios)."""


@dataclass(frozen=True)
class Price:
    """A model's price: dollars per million input and output tokens, who lists it, and for
    which model (its own name, or the base it is priced as)."""

    input: float
    output: float
    provider: str
    listed_as: str

    @property
    def per_round(self) -> float:
        """``estimated_cost_per_round`` at these prices."""
        return round_cost(self.input, self.output)


_MISTRAL_7B = Price(0.20, 0.20, "Together AI", "mistralai/Mistral-7B-v0.1")
_LLAMA_3_8B = Price(0.05, 0.08, "Groq", "llama3-8b-8192 (Meta-Llama-3-8B-Instruct)")

PRICES: dict[str, Price] = {
    "claude-3-opus-20240229": Price(15.0, 75.0, "Anthropic", "claude-3-opus"),
    "claude-3-5-sonnet-20240620": Price(3.0, 15.0, "Anthropic", "claude-3-5-sonnet"),
    "gemini-1.5-flash": Price(0.075, 0.30, "Google", "gemini-1.5-flash (prompts up to 128k)"),
    "phi-3-dpo": Price(0.10, 0.10, "Microsoft Azure", "phi-3-mini-128k-instruct"),
    "Meta-Llama-3-8B-Instruct-Normal": _LLAMA_3_8B,
    "Meta-Llama-3-8B-Instruct-Griffin": _LLAMA_3_8B,
    "dolphin-2.2.1-mistral-7b": _MISTRAL_7B,
    "mistral-orpo-trl": _MISTRAL_7B,
    "mistral-orpo-capybara": _MISTRAL_7B,
    "mistral-orpo-mix": _MISTRAL_7B,
}


def answer_cost(price: Price, prompt_chars: int, answer_chars: int) -> float:
    """An answer's cost at ``price``: what was sent and written, in tokens estimated as
    characters over ``CHARS_PER_TOKEN``."""
    sent, written = prompt_chars / CHARS_PER_TOKEN, answer_chars / CHARS_PER_TOKEN
    return (sent * price.input + written * price.output) / 1_000_000
