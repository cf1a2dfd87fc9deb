"""The providers' own schema transforms, run on pydantic models equivalent to tools in
tests/oracle.rs: OpenAI's `to_strict_json_schema` and Anthropic's `transform_schema`.
Prints one JSON object: {shape: {"openai": schema, "anthropic": schema}}."""
import json
from typing import List, Literal, Optional

from anthropic import transform_schema
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, Field


class Katering(BaseModel):
    jumlah_peserta: int = Field(description="Jumlah peserta sebagai angka", ge=1, le=500)


class EnumWithDefault(BaseModel):
    periode: Literal["harian", "mingguan", "bulanan"] = Field(description="Rentang waktu laporan")
    wilayah: Literal["jakarta", "surabaya", "medan", "semua"] = Field(
        "semua", description="Wilayah; pakai semua bila tidak disebut"
    )


class OptionalField(BaseModel):
    kata: str = Field(description="Kata kunci")
    tahun: Optional[int] = Field(None, description="Tahun terbit; null bila tidak disebut", ge=2000, le=2100)


class Item(BaseModel):
    menu: str = Field(description="Nama menu", max_length=20)
    porsi: int = Field(description="Jumlah porsi", ge=1, le=50)


class Pesanan(BaseModel):
    items: List[Item] = Field(description="Isi pesanan", min_length=1, max_length=3)
    catatan: Optional[str] = Field(None, description="Catatan, null bila tidak ada")


class NestedObject(BaseModel):
    pesanan: Pesanan = Field(description="Pesanan")


class BoundedList(BaseModel):
    label: List[str] = Field(description="Label buku", min_length=1, max_length=5)


SHAPES = {
    "katering": Katering,
    "enum_with_default": EnumWithDefault,
    "optional_field": OptionalField,
    "nested_object": NestedObject,
    "bounded_list": BoundedList,
}

print(json.dumps({
    name: {"openai": to_strict_json_schema(model), "anthropic": transform_schema(model)}
    for name, model in SHAPES.items()
}))
