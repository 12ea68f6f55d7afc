"""An attacker for the tests, run as another account (``nobody``) with the system Python: standard library only.

``squatter.py listen PORT SECONDS`` holds the relay's port before the daemon: it completes any WebSocket
handshake, answers ``auth.hello`` with a challenge whose proof is made up, and prints every message it
receives as a JSON line, for the test to inspect; ``squatter.py listen PORT SECONDS big`` answers
``auth.hello`` instead with one 64 MB message, to make the client hold it, and prints how much of it went out;
``squatter.py listen PORT SECONDS mute`` answers nothing at all after the handshake, not even a closing one.
``squatter.py browser PORT`` poses as the extension (forged ``Origin``) to the real relay: it sends
``auth.hello`` and a made-up proof, and prints what it gets. ``squatter.py fill PORT SECONDS`` tries to keep the
relay's 16 pre-authentication places taken: it opens client sockets that complete the handshake and say nothing,
opening another as each is closed, and prints the status line of every handshake.
"""

import base64
import hashlib
import json
import os
import select
import socket
import struct
import sys
import threading
import time

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
BIG = 64 * 1024 * 1024
EXTENSION_ID = "fplfpdibakppaigkgefcfokekegeonli"


def out(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def read_frame(sock):
    head = _exact(sock, 2)
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", _exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", _exact(sock, 8))[0]
    mask = _exact(sock, 4) if head[1] & 0x80 else b""
    data = bytearray(_exact(sock, length))
    for i in range(len(data) if mask else 0):
        data[i] ^= mask[i % 4]
    return head[0] & 0x0F, bytes(data)


def _exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def send_text(sock, text, masked=False):
    data = text.encode()
    head = bytes([0x81])
    bit = 0x80 if masked else 0
    if len(data) < 126:
        head += bytes([bit | len(data)])
    else:
        head += bytes([bit | 126]) + struct.pack("!H", len(data))
    if masked:
        mask = os.urandom(4)
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        head += mask
    sock.sendall(head + data)


def read_http(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise EOFError
        data += chunk
    return data.decode(errors="replace")


def send_big(conn, peer):
    """One text message of BIG bytes, announced in its header and then streamed until the client hangs up."""
    conn.sendall(bytes([0x81, 127]) + struct.pack("!Q", BIG))
    chunk, sent = b"x" * 65536, 0
    try:
        while sent < BIG:
            conn.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    out({"peer": peer, "big": sent})


def serve_one(conn, peer, mode):
    try:
        request = read_http(conn)
        out({"peer": peer, "http": request.splitlines()[0], "headers": request})
        lines = request.splitlines()
        key = next(line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("sec-websocket-key"))
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        conn.sendall(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
            ).encode()
        )
        while True:
            opcode, data = read_frame(conn)
            if opcode == 8:
                out({"peer": peer, "closed": True})
                if mode == "mute":  # no closing handshake: the client must not wait for one
                    continue
                return
            if opcode != 1:
                continue
            text = data.decode(errors="replace")
            out({"peer": peer, "message": text})
            try:
                message = json.loads(text)
            except ValueError:
                continue
            if mode == "mute":
                continue
            if message.get("method") == "auth.hello" and mode == "big":
                send_big(conn, peer)
            elif message.get("method") == "auth.hello":
                fake = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
                send_text(conn, json.dumps({"method": "auth.challenge", "params": {"nonce": fake, "proof": fake}}))
    except (EOFError, OSError, IndexError):
        out({"peer": peer, "gone": True})
    finally:
        conn.close()


def listen(port, seconds, mode=""):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    server.settimeout(0.2)
    out({"listening": port, "uid": os.getuid()})
    deadline = time.monotonic() + seconds
    peer = 0
    while time.monotonic() < deadline:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        peer += 1
        threading.Thread(target=serve_one, args=(conn, peer, mode), daemon=True).start()
    out({"done": True})


def dial(port, path, origin=""):
    """A socket to the relay on ``path`` that has sent a WebSocket upgrade request (with ``origin``, if any)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            + (f"Origin: {origin}\r\n" if origin else "")
            + "\r\n"
        ).encode()
    )
    return sock


def pose_as_browser(port):
    sock = dial(port, "/browser", f"chrome-extension://{EXTENSION_ID}")
    out({"http": read_http(sock).splitlines()[0], "uid": os.getuid()})
    nonce = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    hello = {"method": "auth.hello", "params": {"role": "browser", "nonce": nonce, "version": 1}}
    send_text(sock, json.dumps(hello), True)
    try:
        while True:
            opcode, data = read_frame(sock)
            if opcode == 8:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
                out({"closed": code})
                return
            out({"message": data.decode(errors="replace")})
            message = json.loads(data)
            if message.get("method") == "auth.challenge":  # no secret: echo its proof back, the best guess there is
                guess = {"method": "auth.proof", "params": {"proof": message["params"]["proof"]}}
                send_text(sock, json.dumps(guess), True)
    except (EOFError, OSError):
        out({"gone": True})


def fill(port, seconds, places=16):
    out({"filling": port, "uid": os.getuid()})
    held = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if held:  # a socket the relay closed (its time limit) frees a place: take it again
            readable, _, _ = select.select(held, [], [], 0)
            for sock in readable:
                held.remove(sock)
                sock.close()
        if len(held) >= places:
            time.sleep(0.05)
            continue
        sock = dial(port, "/client")
        try:
            status = read_http(sock).splitlines()[0]
        except (EOFError, OSError) as exc:
            status = f"gone: {exc!r}"
        out({"status": status})
        if status.startswith("HTTP/1.1 101"):
            held.append(sock)
        else:
            sock.close()
            time.sleep(0.05)


if __name__ == "__main__":
    if sys.argv[1] == "listen":
        listen(int(sys.argv[2]), float(sys.argv[3]), mode=sys.argv[4] if len(sys.argv) > 4 else "")
    elif sys.argv[1] == "fill":
        fill(int(sys.argv[2]), float(sys.argv[3]))
    else:
        pose_as_browser(int(sys.argv[2]))
