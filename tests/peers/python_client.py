"""Reads the simulated API server with the official Kubernetes Python client.

The client decodes every List and object into its typed models, validating required fields, so a
List envelope or a fixture that departs from the API's schema fails here. Lists are paged by
500 as the client's users page them.

usage: python_client.py URL CA_FILE TOKEN_FILE
Prints one JSON line: the item count of each list, the pages read, and the events' reasons.
"""

import json
import sys

from kubernetes import client


def main():
    url, ca_file, token_file = sys.argv[1:4]
    config = client.Configuration()
    config.host = url
    config.ssl_ca_cert = ca_file
    with open(token_file) as f:
        config.api_key = {"authorization": "Bearer " + f.read().strip()}
    api = client.ApiClient(config)
    core, apps, version = client.CoreV1Api(api), client.AppsV1Api(api), client.VersionApi(api)

    out = {"version": version.get_code().git_version, "pages": {}, "items": {}}

    def paged(name, call, **kwargs):
        items, token, pages = [], None, 0
        while True:
            page = call(limit=500, _continue=token, **kwargs)
            pages += 1
            items.extend(page.items)
            token = page.metadata._continue
            if not token:
                break
        out["pages"][name] = pages
        out["items"][name] = len(items)
        return items

    pods = paged("pods", core.list_pod_for_all_namespaces)
    paged("nodes", core.list_node)
    paged("deployments", apps.list_deployment_for_all_namespaces)
    paged("statefulsets", apps.list_stateful_set_for_all_namespaces)
    paged("daemonsets", apps.list_daemon_set_for_all_namespaces)
    paged("persistentvolumeclaims", core.list_persistent_volume_claim_for_all_namespaces)
    events = paged("events", core.list_event_for_all_namespaces, field_selector="type=Warning")
    out["restarts"] = sum(cs.restart_count for p in pods for cs in (p.status.container_statuses or []))
    out["owners"] = sorted({o.kind for p in pods for o in (p.metadata.owner_references or [])})
    out["event_types"] = sorted({e.type for e in events})
    namespaced = core.list_namespaced_pod("shop", limit=500)
    out["items"]["shop_pods"] = len(namespaced.items)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
