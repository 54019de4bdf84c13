#!/usr/bin/env python3
"""The deployment files parse and hang together: Kubernetes manifests (selectors
match labels, ports and volumes named where they are used, scrape annotations on a
served port), and every logrx option they use exists in this logrx.
  check_deploy.py LOGRX DEPLOY_DIR
Exit 77 (a ctest skip) only when PyYAML is missing."""
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: PyYAML is not installed (apt-get install python3-yaml)")
    sys.exit(77)

logrx, deploy = sys.argv[1], sys.argv[2]
failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def options_of(command):
    out = subprocess.run([logrx, command, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


watch_options = options_of("watch")


def check_logrx_args(where, args):
    if not args or args[0] != "watch":
        fail(where, f"logrx is not run as 'logrx watch': {args}")
        return
    for arg in args[1:]:
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name not in watch_options:
                fail(where, f"logrx watch has no option {name}")


def pod_spec_of(doc):
    return doc["spec"]["template"]["spec"], doc["spec"]["template"]["metadata"]


docs = []
kube = os.path.join(deploy, "kubernetes")
for name in sorted(os.listdir(kube)):
    if not name.endswith((".yaml", ".yml")):
        continue
    with open(os.path.join(kube, name)) as f:
        for doc in yaml.safe_load_all(f):
            if doc is not None:
                docs.append((name, doc))
kinds = [doc["kind"] for _, doc in docs]
for required in ("Deployment", "DaemonSet", "ServiceMonitor", "Service"):
    if required not in kinds:
        fail("deploy/kubernetes", f"no {required}")

workloads = []
for name, doc in docs:
    where = f"{name}: {doc.get('kind')} {doc.get('metadata', {}).get('name')}"
    for field in ("apiVersion", "kind", "metadata"):
        if field not in doc:
            fail(where, f"no {field}")
    if "name" not in doc.get("metadata", {}):
        fail(where, "no metadata.name")
    if doc["kind"] in ("Deployment", "DaemonSet"):
        spec, meta = pod_spec_of(doc)
        labels = meta.get("labels", {})
        selector = doc["spec"]["selector"]["matchLabels"]
        if any(labels.get(k) != v for k, v in selector.items()):
            fail(where, "selector does not match the pod template's labels")
        volumes = {v["name"] for v in spec.get("volumes", [])}
        ports = {}
        logrx_seen = False
        for c in spec["containers"]:
            for field in ("name", "image"):
                if field not in c:
                    fail(where, f"a container without {field}")
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    fail(where, f"container {c['name']} mounts undeclared volume {m['name']}")
            for p in c.get("ports", []):
                ports[p.get("name")] = p["containerPort"]
            if c["name"] == "logrx":
                logrx_seen = True
                if c.get("args") and c["args"][0] == "watch":
                    check_logrx_args(where, c["args"])
                else:
                    script = "\n".join(c.get("args", []))
                    r = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True)
                    if r.returncode != 0:
                        fail(where, f"the logrx container's script does not parse: {r.stderr}")
                    for line in re.findall(r"logrx watch[^\n]*(?:\\\n[^\n]*)*", script):
                        for option in re.findall(r"(--[a-z][a-z0-9-]*)", line):
                            if option not in watch_options:
                                fail(where, f"logrx watch has no option {option}")
                    if "/var/log/containers" not in script:
                        fail(where, "the DaemonSet does not read /var/log/containers")
        if not logrx_seen:
            fail(where, "no container named logrx")
        annotations = meta.get("annotations", {})
        if annotations.get("prometheus.io/scrape") != "true":
            fail(where, "no prometheus.io/scrape annotation")
        if int(annotations.get("prometheus.io/port", 0)) not in ports.values():
            fail(where, "prometheus.io/port is not a container port")
        workloads.append((doc, labels, ports))

services = []
for name, doc in docs:
    if doc["kind"] != "Service":
        continue
    where = f"{name}: Service {doc['metadata']['name']}"
    selected = [w for w in workloads
                if all(w[1].get(k) == v for k, v in doc["spec"]["selector"].items())]
    if not selected:
        fail(where, "selects no workload")
    for port in doc["spec"]["ports"]:
        target = port.get("targetPort", port["port"])
        if not any(target in w[2] or target in w[2].values() for w in selected):
            fail(where, f"targetPort {target} is no port of the selected pods")
    services.append(doc)

for name, doc in docs:
    if doc["kind"] != "ServiceMonitor":
        continue
    where = f"{name}: ServiceMonitor {doc['metadata']['name']}"
    wanted = doc["spec"]["selector"]["matchLabels"]
    matched = [s for s in services
               if all(s["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())
               and s["metadata"].get("namespace") == doc["metadata"].get("namespace")]
    if not matched:
        fail(where, "selects no Service in its namespace")
    for endpoint in doc["spec"]["endpoints"]:
        if not any(endpoint["port"] in [p.get("name") for p in s["spec"]["ports"]] for s in matched):
            fail(where, f"endpoint port {endpoint['port']} is not a port of the Service")
        if endpoint.get("path", "/metrics") != "/metrics":
            fail(where, "endpoint path is not /metrics")

# The systemd template unit: ExecStart runs logrx watch with options it has.
unit = os.path.join(deploy, "systemd", "logrx-watch@.service")
with open(unit) as f:
    text = f.read().replace("\\\n", " ")
exec_start = re.search(r"^ExecStart=(\S+) (.*)$", text, re.M)
if not exec_start:
    fail(unit, "no ExecStart")
else:
    words = exec_start.group(2).split()
    check_logrx_args(unit, [w for w in words if not w.startswith("$")])
    if "--journal" not in words or "%i" not in words:
        fail(unit, "does not follow the instance's unit (--journal %i)")
for section in ("[Unit]", "[Service]", "[Install]"):
    if section not in text:
        fail(unit, f"no {section} section")

for failure in failures:
    print("FAIL:", failure)
if failures:
    sys.exit(1)
print(f"ok: {len(docs)} Kubernetes documents and the systemd unit")
