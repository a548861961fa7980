#!/usr/bin/env python3
"""A TCP proxy between an MQTT client and a broker, for outages a broker restart cannot make.

    tcp_proxy.py BROKER_PORT

Listens on a free loopback port and prints it. Commands on standard input, one per line, each
answered with "ok":
    drop    stop relaying: whatever either side sends from now on is read and discarded, so a
            publish the client sends is never acknowledged
    reset   end every relayed connection with a reset (RST) on both sides, and relay again
"""
import select
import socket
import struct
import sys
import threading

broker_port = int(sys.argv[1])
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)

lock = threading.Lock()
pairs = []
dropping = False


def relay(client, upstream):
    sockets = [client, upstream]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], 0.2)
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                with lock:
                    drop = dropping
                if not drop:
                    (upstream if sock is client else client).sendall(data)
    except OSError:
        return


def accept():
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", broker_port))
        with lock:
            pairs.append((client, upstream))
        threading.Thread(target=relay, args=(client, upstream), daemon=True).start()


threading.Thread(target=accept, daemon=True).start()
for line in sys.stdin:
    command = line.strip()
    if command == "drop":
        with lock:
            dropping = True
    elif command == "reset":
        with lock:
            for pair in pairs:
                for sock in pair:
                    try:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        sock.close()
                    except OSError:
                        pass
            pairs.clear()
            dropping = False
    print("ok", flush=True)
