# frozen_string_literal: true

module Horologium
  # A drop-in for an AetherCodex status sink (HorologiumAeternum): the Artificer's call sites stay as
  # they are, and the server builds the preview.
  #
  #   sink = Horologium::Sink.new(url: 'http://127.0.0.1:8080', session: 'oracle-1')
  #   sink&.send_status 'tool_starting', { name:, args: }
  #   sink&.send_status 'tool_completed', { name:, execution_time: exec_time, result: ui_preview(safe_result, name: name) }
  #
  # +tool_starting+ becomes a tool-calls post and +tool_completed+ a tool-results post: a completion
  # is paired with the oldest open start of the same tool name (the Artificer's payloads carry no
  # call_id), or gets a call_id of its own when none is open. Any other type is a generic event
  # with the payload as its data. Payload keys may be Symbols or Strings.
  class Sink
    attr_reader :producer

    def initialize(url:, session:, token: nil, **options)
      @session = session
      @producer = Producer.new(url: url, token: token, **options)
      # Open starts by tool name, oldest first; a name leaves the hash when its last start completes.
      @open_calls = {}
      @lock = Mutex.new
    end

    def send_status(type, payload = {})
      payload = payload.transform_keys(&:to_s)
      case type.to_s
      when 'tool_starting' then tool_starting(payload)
      when 'tool_completed' then tool_completed(payload)
      else @producer.event(@session, type: type.to_s, data: payload)
      end
    end

    private

    def tool_starting(payload)
      name = payload.fetch('name').to_s
      call_id = payload['call_id']&.to_s || SecureRandom.uuid
      args = payload.key?('args') ? payload['args'] : Producer::ABSENT
      reply = @producer.tool_call(@session, name: name, call_id: call_id, args: args)
      @lock.synchronize { (@open_calls[name] ||= []) << reply['call_id'] }
      reply
    end

    # The oldest open start of +name+, taken off the list.
    def oldest_open(name)
      calls = @open_calls[name]
      return nil if calls.nil?

      @open_calls.delete(name) if calls.length == 1
      calls.shift
    end

    # A completion that names its call_id closes that start, so a later one without a call_id is not paired with it.
    def close_open(name, call_id)
      calls = @open_calls[name]
      calls&.delete(call_id)
      @open_calls.delete(name) if calls&.empty?
      call_id
    end

    def tool_completed(payload)
      name = payload.fetch('name').to_s
      call_id = payload['call_id']&.to_s
      call_id = @lock.synchronize { call_id ? close_open(name, call_id) : oldest_open(name) } || SecureRandom.uuid
      @producer.tool_result(
        @session,
        call_id: call_id, name: name, result: payload['result'],
        is_error: payload['is_error'] == true, execution_time: payload['execution_time']
      )
    end
  end
end
