#!/bin/sh
# Creates (or brings up to date) the control plane's own broker client through the running broker's dynamic
# security: username control-plane, password MQTT_CONTROL_PLANE_PASSWORD, allowed to publish work notices and
# retained status under dpp/, and to administer device clients over $CONTROL/dynamic-security/v1. Devices get
# clients of their own; they cannot use this one. Safe to run again. MQTT_HOST and MQTT_PORT: where the broker is.
set -eu
: "${MQTT_ADMIN_PASSWORD:?set MQTT_ADMIN_PASSWORD}"
: "${MQTT_CONTROL_PLANE_PASSWORD:?set MQTT_CONTROL_PLANE_PASSWORD}"
host="${MQTT_HOST:-mqtt}"
port="${MQTT_PORT:-1883}"
# mosquitto_ctrl exits 0 even when it could not connect, so answers are read, not exit codes.
ctrl() { mosquitto_ctrl -h "$host" -p "$port" -u admin -P "$MQTT_ADMIN_PASSWORD" dynsec "$@" 2>&1; }

# The broker may still be starting.
tries=0
until ctrl getDefaultACLAccess | grep -q publishClientSend; do
  tries=$((tries + 1))
  [ "$tries" -ge 60 ] && { echo "the broker at $host:$port did not answer" >&2; exit 1; }
  sleep 1
done

ctrl createRole control-plane >/dev/null 2>&1 || true
ctrl addRoleACL control-plane publishClientSend 'dpp/#' allow 5 >/dev/null 2>&1 || true
ctrl addRoleACL control-plane subscribePattern 'dpp/#' allow 5 >/dev/null 2>&1 || true
ctrl addRoleACL control-plane publishClientSend '$CONTROL/dynamic-security/#' allow 5 >/dev/null 2>&1 || true
ctrl addRoleACL control-plane subscribePattern '$CONTROL/dynamic-security/#' allow 5 >/dev/null 2>&1 || true
ctrl addRoleACL control-plane publishClientReceive '$CONTROL/dynamic-security/#' allow 5 >/dev/null 2>&1 || true
if ctrl getClient control-plane | grep -q 'control-plane'; then
  ctrl setClientPassword control-plane "$MQTT_CONTROL_PLANE_PASSWORD" >/dev/null
else
  ctrl createClient control-plane -p "$MQTT_CONTROL_PLANE_PASSWORD" >/dev/null
fi
ctrl addClientRole control-plane control-plane 5 >/dev/null 2>&1 || true
if ! ctrl getClient control-plane | grep -q 'Roles:.*control-plane'; then
  echo "could not set up the control-plane client on $host:$port:" >&2
  ctrl getClient control-plane >&2
  exit 1
fi
echo "control-plane client ready on $host:$port"
