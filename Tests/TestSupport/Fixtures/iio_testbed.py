#!/usr/bin/python3
"""A umockdev test bed of IIO sensors with the REAL iio-sensor-proxy on it
(Tests/README.md, "iio-sensor-proxy on umockdev").

Run under umockdev's preload (LD_PRELOAD=libumockdev-preload.so.0), with DBUS_SYSTEM_BUS_ADDRESS
pointing at the test's private bus (whose dbus-daemon runs without the preload). Prints
{"root": "<dir>"}, then answers one JSON line per request with {"ok": true} or
{"ok": false, "error": "..."}:

  {"op": "add", "name": "accel" | "proximity" | "als"}
  {"op": "set", "name": "accel", "attributes": {"in_accel_x_raw": "1000", ...}}
      writes sysfs attributes; the proxy's poll drivers re-read them (~700 ms)
  {"op": "remove", "name": "proximity"}   sends the remove uevent, then removes it
  {"op": "start"}                         starts /usr/sbin/iio-sensor-proxy -v
  {"op": "stop"}                          SIGTERM, and waits for it
  {"op": "quit"}                          (also end of input)

The test bed's directory is removed here, and the script leaves through os._exit():
UMockdev.Testbed's finalizer would remove it again and abort.
"""

import json
import os
import shutil
import signal
import subprocess
import sys

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

DEVICES = {
    "accel": ("iio-accel",
              ["in_accel_x_raw", "0", "in_accel_y_raw", "-1000", "in_accel_z_raw", "0",
               "in_accel_scale", "0.009806650", "sampling_frequency", "5.2", "name", "IIO Test Accelerometer"],
              ["NAME", '"IIO Accelerometer"', "IIO_SENSOR_PROXY_TYPE", "iio-poll-accel"]),
    "proximity": ("iio-proximity",
                  ["in_proximity_nearlevel", "128", "in_proximity_raw", "256", "name", "IIO Test Proximity Sensor"],
                  ["NAME", '"IIO Proximity Sensor"', "IIO_SENSOR_PROXY_TYPE", "iio-poll-proximity"]),
    "als": ("iio-als",
            ["integration_time", "1", "in_illuminance_input", "10", "in_illuminance_scale", "1.0"],
            ["NAME", '"IIO Light Sensor"', "IIO_SENSOR_PROXY_TYPE", "iio-poll-als"]),
}


def main():
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    log_path = os.environ.get("IIO_PROXY_LOG", "/dev/null")
    devices = {}
    proxy = None

    def reply(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def stop_proxy():
        nonlocal proxy
        if proxy is not None:
            proxy.send_signal(signal.SIGTERM)
            try:
                proxy.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proxy.kill()
                proxy.wait()
            proxy = None

    reply({"root": root})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            op = request.get("op")
            try:
                if op == "add":
                    name = request["name"]
                    devname, attributes, properties = DEVICES[name]
                    devices[name] = testbed.add_device("iio", devname, None, attributes, properties)
                elif op == "set":
                    for attribute, value in request.get("attributes", {}).items():
                        testbed.set_attribute(devices[request["name"]], attribute, str(value))
                elif op == "remove":
                    device = devices.pop(request["name"])
                    testbed.uevent(device, "remove")
                    testbed.remove_device(device)
                elif op == "start":
                    env = dict(os.environ)
                    env["UMOCKDEV_DIR"] = root
                    env["G_MESSAGES_DEBUG"] = "all"
                    log = open(log_path, "ab")
                    proxy = subprocess.Popen(["/usr/sbin/iio-sensor-proxy", "-v"], env=env,
                                             stdin=subprocess.DEVNULL, stdout=log, stderr=log)
                    log.close()
                elif op == "stop":
                    stop_proxy()
                elif op == "quit":
                    break
                else:
                    raise ValueError(f"unknown op {op!r}")
                reply({"ok": True})
            except Exception as error:  # noqa: BLE001 - reported to the test
                reply({"ok": False, "error": f"{type(error).__name__}: {error}"})
    finally:
        stop_proxy()
        shutil.rmtree(root, ignore_errors=True)
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
