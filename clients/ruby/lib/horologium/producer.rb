# frozen_string_literal: true

require 'erb'
require 'json'
require 'securerandom'

module Horologium
  # Posts tool calls, their results and other status events to one server (or several: connection
  # errors try the next URL). Every post is retried (HttpClient); tool calls and results are
  # idempotent on the server by call_id, and events by the event_id this producer gives each of
  # them (unless given one), so a retry after a lost reply is answered duplicate: true and nothing
  # is stored twice.
  class Producer
    ABSENT = Object.new.freeze

    def initialize(url:, token: nil, timeout: 30.0, retries: 8, backoff: [0.1, 5.0], on_retry: nil)
      @http = HttpClient.new(url: url, token: token, timeout: timeout, retries: retries, backoff: backoff, on_retry: on_retry)
    end

    # Publishes tool_starting; a call_id is generated when nil. Returns call_id, event_seq, duplicate.
    def tool_call(session, name:, call_id: nil, args: ABSENT)
      call_id ||= SecureRandom.uuid
      body = Horologium.object_body([
                                      ['call_id', JSON.generate(call_id)],
                                      ['name', JSON.generate(name.to_s)],
                                      ['args', args.equal?(ABSENT) ? nil : Horologium.json_text_of(args)]
                                    ])
      reply = post(session, 'tool-calls', body, call_id)
      { 'call_id' => call_id, 'event_seq' => reply['event_seq'], 'duplicate' => reply['duplicate'] == true }
    end

    # Commits the complete result to the model queue and publishes tool_completed; idempotent by
    # call_id. +result+ may be Horologium.raw_json(text), sent byte for byte; +execution_time+ in
    # seconds is measured by the server from the tool call when nil.
    def tool_result(session, call_id:, name:, result:, is_error: false, execution_time: nil, args: ABSENT)
      body = Horologium.object_body([
                                      ['call_id', JSON.generate(call_id)],
                                      ['name', JSON.generate(name.to_s)],
                                      ['args', args.equal?(ABSENT) ? nil : Horologium.json_text_of(args)],
                                      ['execution_time', execution_time.nil? ? nil : JSON.generate(execution_time)],
                                      ['is_error', is_error ? 'true' : nil],
                                      ['result', Horologium.json_text_of(result)]
                                    ])
      reply = post(session, 'tool-results', body, call_id)
      reply.merge('duplicate' => reply['duplicate'] == true)
    end

    # Publishes any other status event; +event_id+ (a new UUID when nil) makes its retries idempotent.
    def event(session, type:, data:, event_id: nil)
      body = Horologium.object_body([
                                      ['type', JSON.generate(type.to_s)],
                                      ['data', Horologium.json_text_of(data)],
                                      ['event_id', JSON.generate(event_id || SecureRandom.uuid)]
                                    ])
      reply = post(session, 'events', body)
      { 'event_seq' => reply['event_seq'], 'duplicate' => reply['duplicate'] == true }
    end

    # Posts the call, runs the block, and posts what it returned (or raised, as {"error": message}
    # with is_error) with the time it took; returns the block's value, or raises again what it
    # raised once the error is posted. If the call cannot be posted, the block does not run.
    def track(session, name:, args: ABSENT, call_id: nil)
      call_id = tool_call(session, name: name, call_id: call_id, args: args)['call_id']
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      begin
        value = yield call_id
      rescue StandardError => e
        tool_result(session, call_id: call_id, name: name, result: { error: e.message }, is_error: true,
                             execution_time: elapsed(started), args: args)
        raise
      end
      tool_result(session, call_id: call_id, name: name, result: value, execution_time: elapsed(started), args: args)
      value
    end

    private

    def elapsed(started)
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started).round(6)
    end

    def post(session, what, body, call_id = nil)
      _, text = @http.request('POST', "/v1/sessions/#{ERB::Util.url_encode(session)}/#{what}", body)
      JSON.parse(text)
    rescue RequestError => e
      raise CallIdConflictError.new(call_id, e.message) if e.code == 'CALL_ID_CONFLICT' && call_id

      raise
    end
  end
end
