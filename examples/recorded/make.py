"""Writes the provider responses the structured-output examples and tests replay: for each of
OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini generateContent and Amazon
Bedrock Converse, one
response of each kind (good, broken JSON, wrong shape, business-rule violation, truncated,
refused), in the shape each API returns (fields as in the providers' SDK response types).
Then the replies of reasoning models, which put their thoughts next to the answer, each written
from the provider's documentation (cited where it is made), and the content-filter stop of Chat
Completions. Run `python3 make.py` here to regenerate."""
import json
import os

CASES = {
    "paper": {
        "good": '{"judul": "Deteksi Hoaks Berbahasa Indonesia dengan IndoBERT", "tahun": 2023, "metode": ["IndoBERT", "fine-tuning"], "dataset_publik": "ya"}',
        "broken_json": '{"judul": "Deteksi Hoaks Berbahasa Indonesia dengan IndoBERT", "tahun": 2023, "metode": ["IndoBERT"',
        "wrong_shape": '{"judul": "Deteksi Hoaks", "tahun": "2023", "metode": "IndoBERT", "dataset_publik": "iya", "penulis": "Sari"}',
        "rule_violation": '{"judul": "Deteksi Hoaks Berbahasa Indonesia dengan IndoBERT", "tahun": 2031, "metode": ["IndoBERT"], "dataset_publik": "tidak_jelas"}',
        "truncated": '{"judul": "Deteksi Hoaks Berbahasa Indonesia dengan IndoBERT", "tahun": 2023, "metode": ["IndoB',
    },
    "lowongan": {
        "good": '{"posisi": "Magang Data Analyst", "perusahaan": "PT Nusantara Data", "lokasi": "Jakarta", "berbayar": "ya", "tenggat": "2026-12-15"}',
        "broken_json": '{"posisi": "Magang Data Analyst", "perusahaan": "PT Nusantara Data", lokasi: Jakarta}',
        "wrong_shape": '{"posisi": "Magang Data Analyst", "perusahaan": null, "berbayar": true, "tenggat": "15 Desember"}',
        "rule_violation": '{"posisi": "Magang Data Analyst", "perusahaan": "PT Nusantara Data", "lokasi": null, "berbayar": "tidak_diketahui", "tenggat": "2026-02-30"}',
        "truncated": '{"posisi": "Magang Data Analyst", "perusahaan": "PT Nus',
    },
}
REFUSAL = "I'm sorry, I can't help with that request."


def openai_chat(text, kind):
    message = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
    if kind == "refused":
        message["content"], message["refusal"] = None, REFUSAL
    return {
        "id": "chatcmpl-CAbc123", "object": "chat.completion", "created": 1764460800, "model": "gpt-5-mini-2025-08-07",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "length" if kind == "truncated" else "stop"}],
        "usage": {"prompt_tokens": 412, "completion_tokens": 61, "total_tokens": 473},
        "service_tier": "default", "system_fingerprint": None,
    }


def openai_responses(text, kind):
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    if kind == "refused":
        content = [{"type": "refusal", "refusal": REFUSAL}]
    response = {
        "id": "resp_68f1c2", "object": "response", "created_at": 1764460800, "model": "gpt-5-mini-2025-08-07",
        "status": "completed", "incomplete_details": None, "error": None,
        "output": [
            {"id": "rs_1", "type": "reasoning", "summary": []},
            {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": content},
        ],
        "usage": {"input_tokens": 412, "output_tokens": 61, "total_tokens": 473},
    }
    if kind == "truncated":
        response["status"], response["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
        response["output"][1]["status"] = "incomplete"
    return response


def anthropic(text, kind):
    stop = {"truncated": "max_tokens", "refused": "refusal"}.get(kind, "end_turn")
    content = [{"type": "text", "text": "I can't help with that." if kind == "refused" else text}]
    return {
        "id": "msg_01XYZ", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 430, "output_tokens": 58},
    }


def gemini(text, kind):
    finish = {"truncated": "MAX_TOKENS", "refused": "SAFETY"}.get(kind, "STOP")
    candidate = {"content": {"parts": [] if kind == "refused" else [{"text": text}], "role": "model"}, "finishReason": finish, "index": 0}
    if kind == "refused":
        candidate["safetyRatings"] = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 420, "candidatesTokenCount": 60, "totalTokenCount": 480},
        "modelVersion": "gemini-2.5-flash", "responseId": "abc123",
    }


def bedrock(text, kind):
    """https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html: the
    response's `output.message` holds `content` blocks (`{"text": ...}`), `stopReason` is
    `end_turn`, `max_tokens`, `guardrail_intervened`, `content_filtered`, ...; a guardrail that
    blocks the answer leaves its configured message as the text."""
    stop = {"truncated": "max_tokens", "refused": "guardrail_intervened"}.get(kind, "end_turn")
    content = [{"text": "Sorry, the model cannot answer this question." if kind == "refused" else text}]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 430, "outputTokens": 58, "totalTokens": 488},
        "metrics": {"latencyMs": 812},
    }


PROVIDERS = [("openai-chat", openai_chat), ("openai-responses", openai_responses), ("anthropic", anthropic),
             ("gemini", gemini), ("bedrock-converse", bedrock)]

for provider, make in PROVIDERS:
    os.makedirs(provider, exist_ok=True)
    for case, texts in CASES.items():
        for kind in [*texts, "refused"]:
            with open(f"{provider}/{case}-{kind}.json", "w") as f:
                json.dump(make(texts.get(kind), kind), f, indent=2, ensure_ascii=False)
                f.write("\n")


# The seed's relevance classification: the reason is written before the decision.
RELEVANSI = '{"alasan": "Abstrak membahas deteksi hoaks berbahasa Indonesia dengan IndoBERT; topik tinjauan adalah NLP untuk misinformasi.", "relevan": true}'
for provider, make in PROVIDERS:
    with open(f"{provider}/relevansi-good.json", "w") as f:
        json.dump(make(RELEVANSI, "good"), f, indent=2, ensure_ascii=False)
        f.write("\n")


# Reasoning models. Opaque values (signatures, encrypted content) are made-up base64 of the
# documented shape; what matters is that they go back unchanged.
THOUGHT = "**Membaca abstrak**\nAbstrak menyebut IndoBERT, fine-tuning, dan data yang dirilis."
TOOL_THOUGHT = "**Mengecek kuota**\nPengguna bertanya sisa cuti; alat cek-sisa-cuti menjawabnya."
ANSWER = "Sisa cuti tahunan Sari 9 hari."
TOOL = "cek-sisa-cuti"


def gemini_thinking(parts, finish="STOP"):
    """https://ai.google.dev/gemini-api/docs/thinking (with `includeThoughts`, thought summaries are
    parts marked `"thought": true`) and https://ai.google.dev/gemini-api/docs/thought-signatures
    (a `thoughtSignature` on a part, on the first `functionCall` part of a turn, returned unchanged
    in the next request of a function-calling conversation)."""
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 420, "candidatesTokenCount": 60, "thoughtsTokenCount": 312, "totalTokenCount": 792},
        "modelVersion": "gemini-2.5-flash", "responseId": "thk456",
    }


def anthropic_thinking(content, stop):
    """https://docs.claude.com/en/docs/build-with-claude/extended-thinking: `thinking` blocks with a
    `signature`, `redacted_thinking` blocks with `data`, before `text` and `tool_use`; in a tool-use
    loop the assistant turn, thinking blocks included, goes back unchanged with the `tool_result`."""
    return {
        "id": "msg_01THINK", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 430, "output_tokens": 402},
    }


def responses_reasoning(items):
    """https://platform.openai.com/docs/guides/reasoning and the Response object reference:
    `reasoning` items (with a `summary` and, when the request includes
    `reasoning.encrypted_content`, the `encrypted_content` a `store: false` conversation must send
    back) come before the `message` or `function_call` items."""
    return {
        "id": "resp_think1", "object": "response", "created_at": 1764460800, "model": "gpt-5-mini-2025-08-07",
        "status": "completed", "incomplete_details": None, "error": None, "store": False,
        "output": items,
        "usage": {"input_tokens": 412, "output_tokens": 380, "output_tokens_details": {"reasoning_tokens": 320}, "total_tokens": 792},
    }


def bedrock_thinking(content, stop):
    """https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlock.html:
    a `reasoningContent` block holds `reasoningText` (`text` and the `signature` that verifies it)
    or `redactedContent` (base64), before the `text` and `toolUse` blocks; with extended thinking
    the assistant turn goes back unmodified in the next request of a tool-use conversation."""
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 430, "outputTokens": 402, "totalTokens": 832},
        "metrics": {"latencyMs": 1630},
    }


def reasoning_item(rid, text, secret):
    return {"id": rid, "type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "encrypted_content": secret}


def message_item(text):
    return {"id": "msg_think", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


THINKING = [
    ("gemini", "paper-thoughts", gemini_thinking([
        {"text": THOUGHT, "thought": True},
        {"text": CASES["paper"]["good"], "thoughtSignature": "CpcBAdHtim9Qx1s7kYw0GmvL2aXc8Zf4uN0pR1sT6vB3eW8yH5jK"},
    ])),
    ("gemini", "agent-reasoning-call", gemini_thinking([
        {"text": TOOL_THOUGHT, "thought": True},
        {"functionCall": {"name": TOOL, "args": {}}, "thoughtSignature": "CiwBAdHtim8dEr4mZq9WcPb1fK3nL7uS0aY2gX6hJ4vT"},
    ])),
    ("gemini", "agent-reasoning-answer", gemini_thinking([
        {"text": "**Menjawab**\nKuota dari alat: 9 hari.", "thought": True},
        {"text": ANSWER, "thoughtSignature": "CiQBAdHtim+4wQ1zXo7Lr2nPbE5cV9dK0sU3yT6gH8mA"},
    ])),
    ("anthropic", "paper-thinking", anthropic_thinking([
        {"type": "thinking", "thinking": THOUGHT, "signature": "EqQBCkgIBhABGAIiQHh2WpZK0f3bL8sT1mR5yN7vC9dE2gU4jA6qX0oI3wB"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
        {"type": "text", "text": CASES["paper"]["good"]},
    ], "end_turn")),
    ("anthropic", "agent-reasoning-call", anthropic_thinking([
        {"type": "thinking", "thinking": TOOL_THOUGHT, "signature": "ErUBCkYIBhgCIkBq8sN2vY7mT4cR1xK9wP3fL6hD0gZ5aJ8uE2bQ"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgyZq3Lm8sN1vT6rY0wP2aDFxK4hJ7cU9bE5gR3oI1fM8nS6dA2yW"},
        {"type": "text", "text": "Saya cek kuotanya dulu."},
        {"type": "tool_use", "id": "toolu_01Think", "name": TOOL, "input": {}},
    ], "tool_use")),
    ("anthropic", "agent-reasoning-answer", anthropic_thinking([
        {"type": "thinking", "thinking": "Alat menjawab 9 hari.", "signature": "EqoBCkgIBhABGAIiQK3mN7vR2sT9wY4cP1fL6hD0gZ5aJ8uE"},
        {"type": "text", "text": ANSWER},
    ], "end_turn")),
    ("openai-responses", "paper-reasoning", responses_reasoning([
        reasoning_item("rs_think1", THOUGHT, "gAAAAABo9kX2pL8mQ1rT5vW3yZ7cF0hJ4nS6uB9dG2kE_encrypted_reasoning_1"),
        message_item(CASES["paper"]["good"]),
    ])),
    ("openai-responses", "agent-reasoning-call", responses_reasoning([
        reasoning_item("rs_think2", TOOL_THOUGHT, "gAAAAABo9kX3qM9nR2sU6wX4zA8dG1iK5oT7vC0eH3lF_encrypted_reasoning_2"),
        {"id": "fc_think", "type": "function_call", "status": "completed", "arguments": "{}", "call_id": "call_Think1", "name": TOOL},
    ])),
    ("openai-responses", "agent-reasoning-answer", responses_reasoning([
        reasoning_item("rs_think3", "**Menjawab**", "gAAAAABo9kX4rN0oS3tV7xY5aB9eH2jL6pU8wD1fI4mG_encrypted_reasoning_3"),
        message_item(ANSWER),
    ])),
    ("bedrock-converse", "paper-reasoning", bedrock_thinking([
        {"reasoningContent": {"reasoningText": {"text": THOUGHT, "signature": "EqQBCkgIBhABGAIiQBedrockSig1f3bL8sT1mR5yN7vC9dE"}}},
        {"text": CASES["paper"]["good"]},
    ], "end_turn")),
    ("bedrock-converse", "agent-reasoning-call", bedrock_thinking([
        {"reasoningContent": {"reasoningText": {"text": TOOL_THOUGHT, "signature": "ErUBCkYIBhgCIkBedrockSig2sN2vY7mT4cR1xK9wP3f"}}},
        {"reasoningContent": {"redactedContent": "EmwKAhgBEgyZq3Lm8sN1vT6rY0wP2aDFxK4hJ7cU9bE5gR3oI1fM8nS6dA2yW"}},
        {"text": "Saya cek kuotanya dulu."},
        {"toolUse": {"toolUseId": "tooluse_Think1", "name": TOOL, "input": {}}},
    ], "tool_use")),
    ("bedrock-converse", "agent-reasoning-answer", bedrock_thinking([
        {"reasoningContent": {"reasoningText": {"text": "Alat menjawab 9 hari.", "signature": "EqoBCkgIBhABGAIiQBedrockSig3vR2sT9wY4cP1fL6"}}},
        {"text": ANSWER},
    ], "end_turn")),
]
for provider, name, reply in THINKING:
    with open(f"{provider}/{name}.json", "w") as f:
        json.dump(reply, f, indent=2, ensure_ascii=False)
        f.write("\n")

# https://platform.openai.com/docs/api-reference/chat/object: `finish_reason` is
# `content_filter` when content was omitted by the content filters; the text is cut where it stopped.
filtered = openai_chat(CASES["paper"]["truncated"], "good")
filtered["choices"][0]["finish_reason"] = "content_filter"
with open("openai-chat/paper-content_filter.json", "w") as f:
    json.dump(filtered, f, indent=2, ensure_ascii=False)
    f.write("\n")
