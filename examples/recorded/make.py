"""Writes the provider responses the structured-output examples and tests replay: for each of
OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini generateContent, one
response of each kind (good, broken JSON, wrong shape, business-rule violation, truncated,
refused), in the shape each API returns (fields as in the providers' SDK response types).
Run `python3 make.py` here to regenerate."""
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


for provider, make in [("openai-chat", openai_chat), ("openai-responses", openai_responses), ("anthropic", anthropic), ("gemini", gemini)]:
    os.makedirs(provider, exist_ok=True)
    for case, texts in CASES.items():
        for kind in [*texts, "refused"]:
            with open(f"{provider}/{case}-{kind}.json", "w") as f:
                json.dump(make(texts.get(kind), kind), f, indent=2, ensure_ascii=False)
                f.write("\n")
