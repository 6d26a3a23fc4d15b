# frozen_string_literal: true

# The active OpenTelemetry context goes with every request as W3C headers when the application uses
# OpenTelemetry (docs/operations.md, "Traces"). The opentelemetry-api gem cannot be installed where
# these tests run (no RubyGems), so a stand-in with its API (OpenTelemetry.propagation.inject(carrier))
# plays the application's OpenTelemetry; the server side of the headers is tested in the
# JavaScript suite.
require 'minitest/autorun'
require_relative '../lib/horologium'
require_relative 'servers'

class TraceContextTest < Minitest::Test
  TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
  ACCEPTED = [202, {}, { call_id: 'c1', queue_seq: 1, event_seq: 1, duplicate: false }].freeze

  # What opentelemetry-api's TextMapPropagator does with a carrier: carrier[key] = value.
  class StandInPropagation
    def inject(carrier, context: nil)
      carrier['traceparent'] = TRACEPARENT
      carrier['tracestate'] = 'vendor=1'
    end
  end

  def post_through_stub
    stub = StubServer.new([ACCEPTED])
    Horologium::Producer.new(url: stub.url).tool_result('s', call_id: 'c1', name: 'grep', result: 'x')
    stub.headers[0]
  ensure
    stub&.stop
  end

  def test_without_opentelemetry_no_trace_headers_are_sent
    refute defined?(::OpenTelemetry)
    refute_includes post_through_stub.keys, 'traceparent'
  end

  def test_with_opentelemetry_the_active_context_is_injected
    propagation = StandInPropagation.new
    Object.const_set(:OpenTelemetry, Module.new)
    ::OpenTelemetry.define_singleton_method(:propagation) { propagation }
    headers = post_through_stub
    assert_equal [TRACEPARENT, 'vendor=1'], [headers['traceparent'], headers['tracestate']]
  ensure
    Object.send(:remove_const, :OpenTelemetry) if defined?(::OpenTelemetry)
  end
end
