#!/usr/bin/env python3
"""Kestrel's MAVLink code generator: message definitions (XML) -> one C++ header.

Reads a MAVLink dialect XML (following its <include>s) and writes src/sitl/mavlink/messages.h:
a struct per selected message with its wire layout, plus a table (id, CRC_EXTRA, lengths, name)
of every message in the dialect so the parser can check the CRC of any frame it meets.

Rules implemented (from the MAVLink specification's serialization page):
  * wire order: fields sorted by the size of their base type, largest first, stable (XML order
    among equal sizes); arrays sort by their element type; extension fields (after
    <extensions/>) are not reordered and come last, in XML order;
  * CRC_EXTRA: CRC-16/MCRF4XX over "NAME " then, for each non-extension field in wire order,
    "type " and "name " (uint8_t_mavlink_version counts as uint8_t), then the array length as
    one byte for arrays; the result is (crc & 0xFF) ^ (crc >> 8);
  * min length = payload bytes without extensions (the MAVLink 1 length), max length = with them.

Usage:
  mavgen_kestrel.py --xml common.xml --output messages.h [--messages A,B] [--enums A,B]
  mavgen_kestrel.py --xml common.xml --check messages.h   # exit 1 if it differs, 77 if no XML
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

DEFAULT_MESSAGES = [
    "HEARTBEAT", "SYSTEM_TIME", "COMMAND_LONG", "COMMAND_ACK", "HIL_SENSOR", "HIL_GPS",
    "HIL_STATE_QUATERNION", "HIL_ACTUATOR_CONTROLS", "DISTANCE_SENSOR",
]
DEFAULT_ENUMS = [
    "MAV_TYPE", "MAV_AUTOPILOT", "MAV_MODE_FLAG", "MAV_STATE", "MAV_RESULT",
    "HIL_SENSOR_UPDATED_FLAGS", "MAV_DISTANCE_SENSOR", "HIL_ACTUATOR_CONTROLS_FLAGS",
]

# MAVLink type -> (C++ type, size in bytes)
TYPES = {
    "char": ("char", 1), "int8_t": ("std::int8_t", 1), "uint8_t": ("std::uint8_t", 1),
    "uint8_t_mavlink_version": ("std::uint8_t", 1),
    "int16_t": ("std::int16_t", 2), "uint16_t": ("std::uint16_t", 2),
    "int32_t": ("std::int32_t", 4), "uint32_t": ("std::uint32_t", 4),
    "float": ("float", 4),
    "int64_t": ("std::int64_t", 8), "uint64_t": ("std::uint64_t", 8),
    "double": ("double", 8),
}


class Field:
    def __init__(self, el, extension):
        m = re.fullmatch(r"([a-z0-9_]+)(?:\[(\d+)\])?", el.get("type"))
        if not m or m.group(1) not in TYPES:
            raise SystemExit(f"unsupported field type {el.get('type')!r}")
        self.type = m.group(1)
        self.array = int(m.group(2)) if m.group(2) else 0
        self.name = el.get("name")
        self.units = el.get("units", "")
        self.doc = " ".join((el.text or "").split())
        self.extension = extension
        self.cpp, self.size = TYPES[self.type]
        self.offset = 0

    def wire_bytes(self):
        return self.size * max(1, self.array)


class Message:
    def __init__(self, el):
        self.id = int(el.get("id"))
        self.name = el.get("name")
        self.doc = " ".join((el.findtext("description") or "").split())
        self.fields = []
        extension = False
        for child in el:
            if child.tag == "extensions":
                extension = True
            elif child.tag == "field":
                self.fields.append(Field(child, extension))
        base = [f for f in self.fields if not f.extension]
        ext = [f for f in self.fields if f.extension]
        # sorted() is stable: equal sizes keep their XML order.
        self.wire = sorted(base, key=lambda f: -f.size) + ext
        off = 0
        for f in self.wire:
            f.offset = off
            off += f.wire_bytes()
        self.max_length = off
        self.min_length = sum(f.wire_bytes() for f in base)
        self.crc_extra = crc_extra(self.name, [f for f in self.wire if not f.extension])


def crc_accumulate(crc, data):
    for b in data:
        tmp = (b ^ (crc & 0xFF)) & 0xFF
        tmp = (tmp ^ (tmp << 4)) & 0xFF
        crc = ((crc >> 8) ^ (tmp << 8) ^ (tmp << 3) ^ (tmp >> 4)) & 0xFFFF
    return crc


def crc_extra(name, fields):
    crc = crc_accumulate(0xFFFF, (name + " ").encode())
    for f in fields:
        t = "uint8_t" if f.type == "uint8_t_mavlink_version" else f.type
        crc = crc_accumulate(crc, (t + " ").encode())
        crc = crc_accumulate(crc, (f.name + " ").encode())
        if f.array:
            crc = crc_accumulate(crc, bytes([f.array]))
    return (crc & 0xFF) ^ (crc >> 8)


def load(path, seen=None):
    """Messages and enums of `path` and of everything it includes (includes first)."""
    seen = set() if seen is None else seen
    path = os.path.abspath(path)
    if path in seen:
        return [], {}, None
    seen.add(path)
    root = ET.parse(path).getroot()
    messages, enums = [], {}
    for inc in root.findall("include"):
        m, e, _ = load(os.path.join(os.path.dirname(path), inc.text.strip()), seen)
        messages += m
        for k, v in e.items():
            enums.setdefault(k, []).extend(v)
    for en in root.findall("enums/enum"):
        entries = []
        for entry in en.findall("entry"):
            if entry.get("value") is not None:
                entries.append((entry.get("name"), int(entry.get("value"), 0)))
        enums.setdefault(en.get("name"), []).extend(entries)
    messages += [Message(el) for el in root.findall("messages/message")]
    version = root.findtext("version")
    return messages, enums, int(version) if version else None


def camel(name):
    return "".join(p.capitalize() for p in name.lower().split("_"))


def first_sentence(text, limit=90):
    s = text.split(". ")[0].rstrip(".")
    return s if len(s) <= limit else s[: limit - 3].rstrip() + "..."


def generate(xml, message_names, enum_names):
    messages, enums, version = load(xml)
    by_name = {m.name: m for m in messages}
    ids = {}
    for m in messages:
        if m.id in ids:
            raise SystemExit(f"message id {m.id} defined twice ({ids[m.id]}, {m.name})")
        ids[m.id] = m.name
    out = []
    w = out.append
    w("// GENERATED by src/sitl/gen/mavgen_kestrel.py from " + os.path.basename(xml) +
      f" (dialect version {version}). Do not edit:")
    w("// regenerate with `python3 src/sitl/gen/mavgen_kestrel.py --xml ../shared/mavlink/" +
      os.path.basename(xml) + " --output src/sitl/mavlink/messages.h`.")
    w("// clang-format off")
    w("#pragma once")
    w("")
    w("#include <array>")
    w("#include <cstddef>")
    w("#include <cstdint>")
    w("#include <string_view>")
    w("")
    w('#include "sitl/mavlink/wire.h"')
    w("")
    w("namespace kestrel::sitl::mavlink {")
    w("")
    w(f"/// The dialect's <version> (HEARTBEAT.mavlink_version).")
    w(f"inline constexpr std::uint8_t kDialectVersion = {version or 0};")
    w("")
    for en in enum_names:
        if en not in enums:
            raise SystemExit(f"enum {en} not found")
        w(f"/// Enum {en}.")
        w(f"namespace {en.lower()} {{")
        names = [n for n, _ in enums[en]]
        prefix = en + "_"
        if not all(n.startswith(prefix) for n in names) and len(names) > 1:
            # e.g. HIL_SENSOR_UPDATED_FLAGS entries are HIL_SENSOR_UPDATED_*: the common prefix.
            prefix = os.path.commonprefix(names)
            prefix = prefix[: prefix.rfind("_") + 1]
        for name, value in enums[en]:
            short = name[len(prefix):] if name.startswith(prefix) else name
            if short[0].isdigit():
                short = "N" + short
            w(f"inline constexpr std::uint64_t k{camel(short)} = {value};")
        w(f"}}  // namespace {en.lower()}")
        w("")
    for name in message_names:
        if name not in by_name:
            raise SystemExit(f"message {name} not found")
        m = by_name[name]
        cname = camel(m.name)
        w(f"/// {m.name} (#{m.id}): {first_sentence(m.doc)}.")
        w(f"struct {cname} {{")
        w(f"  static constexpr std::uint32_t kId = {m.id};")
        w(f"  static constexpr std::uint8_t kCrcExtra = {m.crc_extra};")
        w(f"  static constexpr std::size_t kMinLength = {m.min_length};  ///< without extensions")
        w(f"  static constexpr std::size_t kMaxLength = {m.max_length};  ///< with extensions")
        w(f'  static constexpr std::string_view kName = "{m.name}";')
        w("")
        for f in m.fields:
            t = f"std::array<{f.cpp}, {f.array}>" if f.array else f.cpp
            init = "{}"
            if f.type == "uint8_t_mavlink_version":
                init = " = kDialectVersion"
            elif not f.array:
                init = " = 0"
            unit = f"[{f.units}] " if f.units else ""
            ext = "(extension) " if f.extension else ""
            w(f"  {t} {f.name}{init};  ///< {ext}{unit}{first_sentence(f.doc, 60)}")
        w("")
        w("  /// Writes the full kMaxLength-byte payload in wire order.")
        w("  void encode(std::uint8_t* p) const {")
        for f in m.wire:
            if f.array:
                w(f"    for (std::size_t i = 0; i < {f.array}; ++i) "
                  f"put_le(p + {f.offset} + i * {f.size}, {f.name}[i]);")
            else:
                w(f"    put_le(p + {f.offset}, {f.name});")
        w("  }")
        w("  /// Reads a kMaxLength-byte payload (a shorter wire payload is zero-extended first).")
        w(f"  static {cname} decode(const std::uint8_t* p) {{")
        w(f"    {cname} m;")
        for f in m.wire:
            if f.array:
                w(f"    for (std::size_t i = 0; i < {f.array}; ++i) "
                  f"get_le(p + {f.offset} + i * {f.size}, m.{f.name}[i]);")
            else:
                w(f"    get_le(p + {f.offset}, m.{f.name});")
        w("    return m;")
        w("  }")
        w("};")
        w("")
    w("/// Every message of the dialect: what the parser needs to check a frame.")
    w("struct MessageInfo {")
    w("  std::uint32_t id;")
    w("  std::uint8_t crc_extra;")
    w("  std::uint8_t min_length;  ///< payload bytes without extensions")
    w("  std::uint8_t max_length;  ///< payload bytes with extensions")
    w("  std::string_view name;")
    w("};")
    w("")
    w("/// Sorted by id.")
    w("inline constexpr MessageInfo kMessageInfo[] = {")
    for m in sorted(messages, key=lambda m: m.id):
        w(f'    {{{m.id}, {m.crc_extra}, {m.min_length}, {m.max_length}, "{m.name}"}},')
    w("};")
    w("")
    w("}  // namespace kestrel::sitl::mavlink")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xml", required=True)
    ap.add_argument("--output")
    ap.add_argument("--check")
    ap.add_argument("--messages", default=",".join(DEFAULT_MESSAGES))
    ap.add_argument("--enums", default=",".join(DEFAULT_ENUMS))
    a = ap.parse_args()
    if not os.path.exists(a.xml):
        print(f"mavgen_kestrel: SKIP: {a.xml} not found (../shared absent)", file=sys.stderr)
        return 77
    text = generate(a.xml, a.messages.split(","), a.enums.split(","))
    if a.check:
        with open(a.check) as f:
            committed = f.read()
        if committed != text:
            print(f"mavgen_kestrel: {a.check} differs from what {a.xml} generates; "
                  "regenerate it (see its first lines)", file=sys.stderr)
            return 1
        print(f"mavgen_kestrel: {a.check} matches {a.xml}")
        return 0
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
