#!/usr/bin/env python3
"""A minimal Enhanced RTMP publisher for the HEVC test: Debian 12's ffmpeg (5.1) refuses HEVC
in FLV ("Video codec hevc not compatible with flv") and GStreamer 1.22's flvmux has no H.265,
so this sends real x265 output itself, as OBS 29.1+ does: E-RTMP video messages with FourCC
'hvc1' (SequenceStart with an HEVCDecoderConfigurationRecord, then CodedFrames for key
frames and CodedFramesX for the others).

  rtmp_publish_hevc.py --url rtmp://HOST:PORT/APP/KEY --input FILE.hevc [--fps 25]

FILE is an Annex B HEVC stream with access unit delimiters and no B-frames (pts = dts), e.g.
ffmpeg … -c:v libx265 -x265-params bframes=0 -bsf:v hevc_metadata=aud=insert -f hevc FILE.
Sends in real time. Exit 0 when all is sent, 2 when the server refuses the publish."""
import argparse
import re
import socket
import struct
import sys
import time

CHUNK = 4096


def amf_string(s):
    b = s.encode()
    return b"\x02" + struct.pack(">H", len(b)) + b


def amf_number(n):
    return b"\x00" + struct.pack(">d", n)


def amf_object(props):
    out = b"\x03"
    for k, v in props.items():
        kb = k.encode()
        out += struct.pack(">H", len(kb)) + kb + (amf_string(v) if isinstance(v, str) else amf_number(v))
    return out + b"\x00\x00\x09"


def message(csid, mtype, stream_id, ts, payload):
    out = bytes([csid]) + struct.pack(">I", ts)[1:] + struct.pack(">I", len(payload))[1:]
    out += bytes([mtype]) + struct.pack("<I", stream_id)
    for i in range(0, max(len(payload), 1), CHUNK):
        if i:
            out += bytes([0xC0 | csid])
        out += payload[i:i + CHUNK]
    return out


def nal_units(data):
    starts = [m.end() for m in re.finditer(b"\x00\x00\x01", data)]
    for i, s in enumerate(starts):
        end = starts[i + 1] - 3 if i + 1 < len(starts) else len(data)
        nal = data[s:end]
        while nal.endswith(b"\x00"):
            nal = nal[:-1]
        if nal:
            yield nal


def access_units(data):
    au = []
    for nal in nal_units(data):
        if (nal[0] >> 1) & 0x3F == 35 and au:  # AUD: a new access unit
            yield au
            au = []
        au.append(nal)
    if au:
        yield au


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--fps", type=float, default=25)
    a = p.parse_args()
    m = re.match(r"rtmp://([^:/]+):(\d+)/([^/]+)/(.+)", a.url)
    host, port, app, key = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"\x03" + bytes(8) + bytes(1528))  # C0, C1 (simple form)
    got = b""
    while len(got) < 1 + 1536 * 2:
        part = s.recv(65536)
        if not part:
            sys.exit("handshake: connection closed")
        got += part
    s.sendall(got[1:1537])  # C2 echoes S1
    s.sendall(message(2, 1, 0, 0, struct.pack(">I", CHUNK)))  # our chunk size
    tc = f"rtmp://{host}:{port}/{app}"
    s.sendall(message(3, 20, 0, 0, amf_string("connect") + amf_number(1) +
                      amf_object({"app": app, "type": "nonprivate", "tcUrl": tc,
                                  "fourCcList": "hvc1"})))
    s.sendall(message(3, 20, 0, 0, amf_string("createStream") + amf_number(2) + b"\x05"))
    s.sendall(message(8, 20, 1, 0, amf_string("publish") + amf_number(3) + b"\x05" +
                      amf_string(key) + amf_string("live")))
    answer, deadline = got[3073:], time.time() + 5
    while b"NetStream.Publish." not in answer and time.time() < deadline:
        part = s.recv(65536)
        if not part:
            break
        answer += part
    if b"NetStream.Publish.Start" not in answer:
        print("publish refused:", re.findall(rb"NetStream\.[A-Za-z.]+", answer), file=sys.stderr)
        sys.exit(2)

    units = list(access_units(open(a.input, "rb").read()))
    params = [n for n in units[0] if 32 <= (n[0] >> 1) & 0x3F <= 34]
    record = bytes([1]) + bytes(20) + bytes([0x03, len(params)])  # NAL lengths of 4 bytes
    for n in params:
        record += bytes([(n[0] >> 1) & 0x3F]) + struct.pack(">HH", 1, len(n)) + n
    s.sendall(message(6, 9, 1, 0, bytes([0x80 | (1 << 4) | 0]) + b"hvc1" + record))
    start = time.time()
    for i, au in enumerate(units):
        ts = int(i * 1000 / a.fps)
        key_frame = any(16 <= (n[0] >> 1) & 0x3F <= 23 for n in au)
        body = b"".join(struct.pack(">I", len(n)) + n for n in au
                        if not 32 <= (n[0] >> 1) & 0x3F <= 35)
        if key_frame:  # CodedFrames: a composition time offset (0) precedes the data
            head = bytes([0x80 | (1 << 4) | 1]) + b"hvc1" + b"\x00\x00\x00"
        else:  # CodedFramesX: no offset
            head = bytes([0x80 | (2 << 4) | 3]) + b"hvc1"
        delay = start + ts / 1000 - time.time()
        if delay > 0:
            time.sleep(delay)
        s.sendall(message(6, 9, 1, ts, head + body))
    s.sendall(message(3, 20, 0, 0, amf_string("deleteStream") + amf_number(4) + b"\x05" +
                      amf_number(1)))
    s.close()


if __name__ == "__main__":
    main()
