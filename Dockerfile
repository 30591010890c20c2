# syntax=docker/dockerfile:1
# The gRPC gateway's image (infra/constructs/grpc-service.ts; built by `cdk deploy -c grpc=true`,
# never by synthesis): the container entry bundled by esbuild into one ESM file, as the Lambda
# functions are (infra/constructs/gateway-function.ts), with Cedar's wasm beside it, run by Node 24
# as a non-root user. The bundle is plain JavaScript, so the build stage runs on the builder's own
# platform and only the runtime stage is the target's (linux/arm64 in the stack).

FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the bundle needs none (esbuild's launcher finds its platform binary without its own), and
# the development tools' scripts (a Node download, browsers) have no place in an image build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY shared ./shared
COPY functions ./functions
COPY infra ./infra
COPY proto ./proto
# CommonJS dependencies call require() and read files next to themselves (Cedar's wasm): the ESM
# bundle gets require and __dirname defined, and the wasm (and any .proto the server loads) beside it.
RUN node_modules/.bin/esbuild infra/container/grpc-main.ts \
      --bundle --platform=node --target=node24 --format=esm --main-fields=module,main \
      --minify --sourcemap --sources-content=false --outfile=dist/grpc-main.mjs \
      "--banner:js=import { createRequire as __gatewayCreateRequire } from 'node:module'; import { fileURLToPath as __gatewayFileUrl } from 'node:url'; import { dirname as __gatewayDirname } from 'node:path'; const require = __gatewayCreateRequire(import.meta.url); const __dirname = __gatewayDirname(__gatewayFileUrl(import.meta.url));" \
 && cp node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm dist/ \
 && cp -r proto dist/proto

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    GRPC_PORT=50051
WORKDIR /app
# Owned by root, read-only to the user the process runs as (the task's root file system is read-only too).
COPY --from=build /src/dist ./dist
USER node
EXPOSE 50051
# No HEALTHCHECK: the load balancer calls grpc.health.v1.Health/Check on the port itself.
CMD ["node", "dist/grpc-main.mjs"]
