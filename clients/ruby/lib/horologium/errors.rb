# frozen_string_literal: true

module Horologium
  # An error reply, or a request that ran out of retries. +status+ is the HTTP status (0 when no
  # reply came); +code+ the envelope's error.code, or NETWORK_ERROR, TIMEOUT or HTTP_<status>.
  class RequestError < StandardError
    attr_reader :status, :code, :details

    def initialize(status, code, message, details = nil)
      super(message)
      @status = status
      @code = code
      @details = details
    end
  end

  # A call_id reused with a different name, args or result (409 CALL_ID_CONFLICT): never retried.
  class CallIdConflictError < RequestError
    attr_reader :call_id

    def initialize(call_id, message)
      super(409, 'CALL_ID_CONFLICT', message)
      @call_id = call_id
    end
  end
end
