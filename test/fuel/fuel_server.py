#!/usr/bin/env python3
"""A Fuel server for tests, on 127.0.0.1 only: serves the model folders under MODELS_DIR the way
Fuel's REST API 1.0 does for ignition-fuel-tools 7 (the requests it makes for a download):

  GET /1.0/OWNER/models/NAME                  model metadata (JSON)
  GET /1.0/OWNER/models/NAME/VERSION/NAME.zip the model's files as a zip, VERSION a number or
                                              "tip", with the version in X-Ign-Resource-Version

Usage: fuel_server.py MODELS_DIR PORT_FILE LOG_FILE   (binds an ephemeral port, writes it to
PORT_FILE, appends every request line to LOG_FILE; every model has version VERSION=2)."""
import io
import json
import os
import sys
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, HTTPServer

MODELS, PORT_FILE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
OWNER, VERSION = "kestrel", 2


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, ctype, version=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if version is not None:
            self.send_header("X-Ign-Resource-Version", str(version))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        with open(LOG, "a") as log:
            log.write("GET " + path + "\n")
        parts = [p for p in path.split("/") if p]
        if len(parts) < 4 or parts[0] != "1.0" or parts[1] != OWNER or parts[2] != "models":
            return self.send(404, b"not found", "text/plain")
        name = parts[3]
        folder = os.path.join(MODELS, name)
        if not os.path.isdir(folder):
            return self.send(404, b"no such model", "text/plain")
        if len(parts) == 4:
            meta = {"name": name, "owner": OWNER, "version": VERSION, "description": "test"}
            return self.send(200, json.dumps(meta).encode(), "application/json")
        if (len(parts) == 6 and parts[4] in ("tip", str(VERSION)) and parts[5] == name + ".zip"):
            data = io.BytesIO()
            with zipfile.ZipFile(data, "w") as z:
                # Folders get entries of their own, as Fuel's zips have (fuel-tools 7 creates
                # a folder only from its entry).
                for root, dirs, files in os.walk(folder):
                    dirs.sort()
                    for d in dirs:
                        z.write(os.path.join(root, d), os.path.relpath(os.path.join(root, d), folder) + "/")
                    for f in sorted(files):
                        full = os.path.join(root, f)
                        z.write(full, os.path.relpath(full, folder))
            return self.send(200, data.getvalue(), "application/zip", VERSION)
        return self.send(404, b"not found", "text/plain")


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_port))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
