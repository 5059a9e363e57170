#!/bin/sh
# Creates (or re-sets the password of) the control plane's own EMQX login in the built-in database, through
# EMQX's REST API with the dashboard admin. NOT TESTED in this repository's CI (see emqx.conf).
# EMQX_URL (http://emqx:18083), EMQX_DASHBOARD_PASSWORD, MQTT_CONTROL_PLANE_PASSWORD.
set -eu
: "${EMQX_DASHBOARD_PASSWORD:?set EMQX_DASHBOARD_PASSWORD}"
: "${MQTT_CONTROL_PLANE_PASSWORD:?set MQTT_CONTROL_PLANE_PASSWORD}"
api="${EMQX_URL:-http://emqx:18083}/api/v5"
authn="$api/authentication/password_based%3Abuilt_in_database/users"
token=$(curl -fsS -X POST "$api/login" -H 'content-type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$EMQX_DASHBOARD_PASSWORD\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
[ -n "$token" ] || { echo "could not sign in to $api as admin" >&2; exit 1; }
body="{\"user_id\":\"control-plane\",\"password\":\"$MQTT_CONTROL_PLANE_PASSWORD\",\"is_superuser\":false}"
if curl -fsS -o /dev/null -H "authorization: Bearer $token" "$authn/control-plane"; then
  curl -fsS -o /dev/null -X PUT "$authn/control-plane" -H "authorization: Bearer $token" \
    -H 'content-type: application/json' -d "{\"password\":\"$MQTT_CONTROL_PLANE_PASSWORD\",\"is_superuser\":false}"
else
  curl -fsS -o /dev/null -X POST "$authn" -H "authorization: Bearer $token" -H 'content-type: application/json' -d "$body"
fi
echo "control-plane login ready on $api"
