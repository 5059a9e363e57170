#!/bin/sh
# Starts Mosquitto with dynamic security. On the first start (no dynamic-security.json yet) it creates the file
# with an admin client whose password is MQTT_ADMIN_PASSWORD; later starts keep the file and what it holds.
# Paths can be moved for a native run: MOSQUITTO_CONF, DYNSEC_FILE.
set -eu
conf="${MOSQUITTO_CONF:-/mosquitto/config/mosquitto.conf}"
dynsec="${DYNSEC_FILE:-/mosquitto/data/dynamic-security.json}"
if [ ! -f "$dynsec" ]; then
  : "${MQTT_ADMIN_PASSWORD:?set MQTT_ADMIN_PASSWORD (see .env.example)}"
  mosquitto_ctrl dynsec init "$dynsec" admin "$MQTT_ADMIN_PASSWORD" >/dev/null
  echo "dynamic security initialised in $dynsec"
fi
exec mosquitto -c "$conf"
