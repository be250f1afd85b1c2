#!/usr/bin/python3
"""Writes the fwvendor fixture sets, one directory per profile (see README.md)."""
import json, os

def env(path, name, results, version, vdom="root", extra=None):
    e = {"http_method": "GET", "results": results, "vdom": vdom, "path": path, "name": name,
         "status": "success", "serial": "FGVM0000TEST0001", "version": version, "build": 1000}
    if extra:
        e.update(extra)
    return e

for profile, version in [("7.0", "v7.0.12"), ("7.2", "v7.2.8"), ("7.4", "v7.4.4"), ("7.6", "v7.6.0")]:
    os.makedirs(profile, exist_ok=True)
    files = {
        "system_status.json": env("system", "status", {"model_name": "FortiGate", "model_number": "VM64", "model": "FGVM64", "hostname": "fw-edge-1"}, version),
        "system_resource_usage.json": env("system", "resource", {"cpu": [{"current": 7}], "mem": [{"current": 41}], "disk": [{"current": 12}], "session": [{"current": 1834}]}, version),
        "system_interface.json": env("system", "interface", {
            "port1": {"id": "port1", "name": "port1", "alias": "WAN1", "link": True, "speed": 1000.0, "duplex": 1, "rx_packets": 1200, "tx_packets": 1100, "rx_bytes": 987654321, "tx_bytes": 123456789, "rx_errors": 0, "tx_errors": 1},
            "port2": {"id": "port2", "name": "port2", "alias": "<img src=x onerror=alert(1)>", "link": False, "speed": 0.0, "duplex": 0, "rx_packets": 0, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0, "rx_errors": 0, "tx_errors": 0}}, version),
        "vpn_ipsec.json": env("vpn", "ipsec", [
            {"proxyid": [{"p2name": "hq-p2", "status": "up", "incoming_bytes": 5000, "outgoing_bytes": 7000}], "name": "to-hq", "rgwy": "203.0.113.10", "creation_time": 86400, "incoming_bytes": 5000, "outgoing_bytes": 7000},
            {"proxyid": [{"p2name": "br-p2", "status": "down"}], "name": "to-branch", "rgwy": "198.51.100.20", "creation_time": 0, "incoming_bytes": 0, "outgoing_bytes": 0}], version),
        "vpn_ssl.json": env("vpn", "ssl", [{"index": 0, "user_name": "alice", "remote_host": "192.0.2.44", "last_login_time": 1764000000, "subsessions": []}], version),
        "virtual-wan_health-check.json": env("virtual-wan", "health-check", {"dns-check": {
            "port1": {"status": "up", "latency": 12.5, "jitter": 0.8, "packet_loss": 0.0},
            "port3": {"status": "down", "latency": 0.0, "jitter": 0.0, "packet_loss": 100.0}}}, version),
        "firewall_policy.json": env("firewall", "policy", [
            {"policyid": 1, "active_sessions": 12, "bytes": 4096000, "packets": 3200, "hit_count": 450, "last_used": 1764000100},
            {"policyid": 7, "active_sessions": 0, "bytes": 0, "packets": 0, "hit_count": 0}], version),
    }
    for name, body in files.items():
        with open(os.path.join(profile, name), "w") as f:
            json.dump(body, f, indent=1, ensure_ascii=False)
            f.write("\n")
