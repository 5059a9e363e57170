# The control plane (and, with another command, the agent) from this repository.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY shared/package.json shared/
COPY control-plane/package.json control-plane/
COPY agent/package.json agent/
COPY desktop/package.json desktop/
COPY firmware-sim/package.json firmware-sim/
COPY testkit/package.json testkit/
COPY test/package.json test/
COPY bench/package.json bench/
COPY verify/package.json verify/
RUN ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
# socat: the demo floor's simulator serves its printer and scanner on ptys.
RUN apt-get update && apt-get install -y --no-install-recommends socat && rm -rf /var/lib/apt/lists/*
ENV DPP_ENV=production NODE_ENV=production
COPY --from=deps /app/node_modules node_modules
COPY . .
USER node
EXPOSE 8080 1883
CMD ["npx", "tsx", "control-plane/src/main.ts"]
