# frozen_string_literal: true

# Horologium's Ruby client (the standard library only): Horologium::Producer posts tool calls, tool
# results and other status events with the same retries and idempotency as the JavaScript and
# Python SDKs; Horologium::Sink is a drop-in for an AetherCodex status sink (send_status).
require_relative 'horologium/errors'
require_relative 'horologium/raw_json'
require_relative 'horologium/http_client'
require_relative 'horologium/producer'
require_relative 'horologium/sink'
