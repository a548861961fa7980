#!/usr/bin/python3
"""A umockdev test bed of power_supply (or other udev class) devices, driven over stdin/stdout (JSON Lines).

Started by the Swift tests (TestSupport's Testbed) under umockdev's preload
(LD_PRELOAD=libumockdev-preload.so.0): umockdev's uevent sender looks the device up
through libudev, which must see the test bed's /sys. This script binds no uevent socket,
so it cannot take the events of the process under test (Tests/README.md, "umockdev test
beds"). It creates a UMockdev.Testbed, prints {"root": "<dir>"} (the UMOCKDEV_DIR for the
process under test), then answers one JSON line per request:

  {"op": "add", "name": "BAT0", "attributes": {...}, "properties": {...}, "subsystem": "power_supply"}
      adds /sys/class/<subsystem>/<name> ("subsystem" is optional, power_supply by
      default); umockdev sends an "add" uevent
  {"op": "set", "name": "BAT0", "attributes": {...}, "properties": {...}, "uevent": "change"}
      writes sysfs attributes (what a re-read sees) and udev properties (what the
      device's uevent file and the next uevent carry); "uevent" is optional: without it
      nothing is announced, as with a real battery's silent capacity steps
  {"op": "uevent", "name": "BAT0", "action": "change"}
  {"op": "remove", "name": "BAT0", "silent": false}
      sends the "remove" uevent (umockdev's remove_device sends none), then removes it;
      with "silent": true, removes it unannounced
  {"op": "quit"}

Each request is answered with {"ok": true} or {"ok": false, "error": "..."}.
End of input counts as "quit".

The test bed's directory is removed here and the script leaves through os._exit():
UMockdev.Testbed's finalizer would remove it again and abort (g_error) if it ran after us.
"""

import json
import os
import shutil
import sys

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402


def flat(mapping):
    """{"a": 1} -> ["a", "1"]: umockdev takes name/value pairs as one flat list."""
    out = []
    for name, value in (mapping or {}).items():
        out += [str(name), str(value)]
    return out


def main():
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    devices = {}
    subsystems = {}

    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    reply({"root": root})
    try:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            request = json.loads(line)
            op = request.get("op")
            if op == "quit":
                reply({"ok": True})
                break
            try:
                name = request.get("name")
                if op == "add":
                    subsystems[name] = request.get("subsystem") or "power_supply"
                    devices[name] = testbed.add_device(
                        subsystems[name], name, None,
                        flat(request.get("attributes")), flat(request.get("properties")))
                    if not devices[name]:
                        raise RuntimeError("add_device failed for " + name)
                elif op == "set":
                    path = devices[name]
                    for attribute, value in (request.get("attributes") or {}).items():
                        testbed.set_attribute(path, attribute, str(value))
                    for prop, value in (request.get("properties") or {}).items():
                        testbed.set_property(path, prop, str(value))
                    if request.get("uevent"):
                        testbed.uevent(path, request["uevent"])
                elif op == "uevent":
                    testbed.uevent(devices[name], request["action"])
                elif op == "remove":
                    path = devices.pop(name)
                    if not request.get("silent"):
                        testbed.uevent(path, "remove")
                    # The kernel removes a device from sysfs at once; remove_device deletes its
                    # files one by one. Unlinking the class link first hides it from enumeration
                    # in one step, so a re-read never sees a half-removed device.
                    link = os.path.join(root, "sys/class", subsystems.pop(name, "power_supply"), name)
                    if os.path.islink(link):
                        os.unlink(link)
                    testbed.remove_device(path)
                else:
                    raise ValueError("unknown op %r" % op)
                reply({"ok": True})
            except Exception as error:  # report, keep serving
                reply({"ok": False, "error": "%s: %s" % (type(error).__name__, error)})
    finally:
        shutil.rmtree(root, ignore_errors=True)
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
