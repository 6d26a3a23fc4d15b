# frozen_string_literal: true

require 'json'
require 'net/http'
require 'time'
require 'uri'

module Horologium
  # One HTTP request with a timeout, retried with full-jitter backoff on what is worth retrying:
  # the JavaScript and Python SDKs' rules (docs/sdk-and-cli.md, "What each SDK does on each
  # failure"). The server unreachable, a connection cut and a timeout are retried (trying the next
  # base URL when there are several), as are 429 and 503 (after their Retry-After) and a proxy's
  # 502 and 504. Any other error reply raises RequestError carrying the envelope's code.
  class HttpClient
    RETRY_STATUSES = [429, 502, 503, 504].freeze
    # A Retry-After is honoured up to this many seconds.
    MAX_RETRY_AFTER = 60.0
    NETWORK_ERRORS = [SystemCallError, IOError, SocketError, EOFError, Net::HTTPBadResponse].freeze

    # A failed attempt: the error, whether to retry, to try the next URL, and after how long.
    Failure = Struct.new(:error, :retry, :rotate, :retry_after)

    def initialize(url:, token: nil, timeout: 30.0, retries: 8, backoff: [0.1, 5.0], on_retry: nil)
      @urls = Array(url).map { |u| u.sub(%r{/+\z}, '') }
      raise ArgumentError, 'at least one server URL is needed' if @urls.empty?

      @token = token
      @timeout = timeout
      @retries = retries
      @backoff = backoff
      @on_retry = on_retry
      @next = 0
    end

    # [status, text] of a 2xx reply, after retries; anything else raises RequestError.
    def request(method, path, body = nil, extra_timeout: 0)
      attempt = 0
      loop do
        base = @urls[@next % @urls.length]
        outcome = try_once(base, method, path, body, @timeout + extra_timeout)
        return outcome unless outcome.is_a?(Failure)
        raise outcome.error if !outcome.retry || attempt >= @retries

        attempt += 1
        @next += 1 if outcome.rotate
        delay = outcome.retry_after || self.class.full_jitter_delay(@backoff[0], @backoff[1], attempt)
        @on_retry&.call({ attempt: attempt, delay: delay, reason: outcome.error.message, url: base })
        sleep(delay)
      end
    end

    # Seconds before retry +attempt+ (1, 2, …): random in [0, min(max, initial * 2^(attempt-1))].
    def self.full_jitter_delay(initial, maximum, attempt)
      rand * [maximum, initial * (2**[0, attempt - 1].max)].min
    end

    private

    # The active OpenTelemetry context as W3C headers (traceparent, tracestate) when the application
    # uses OpenTelemetry (the opentelemetry-api gem, optional): the server makes each tool
    # execution's span a child of the span active when the call was posted.
    def inject_trace_context(request)
      return unless defined?(::OpenTelemetry) && ::OpenTelemetry.respond_to?(:propagation)

      ::OpenTelemetry.propagation.inject(request)
    end

    def try_once(base, method, path, body, timeout)
      uri = URI("#{base}#{path}")
      what = "#{method} #{base}#{path}"
      request = Net::HTTP.const_get(method.capitalize).new(uri)
      request['accept'] = 'application/json'
      if body
        request['content-type'] = 'application/json'
        request.body = body
      end
      token = @token.respond_to?(:call) ? @token.call : @token
      request['authorization'] = "Bearer #{token}" if token
      inject_trace_context(request)
      response = Net::HTTP.start(uri.host, uri.port, open_timeout: timeout, read_timeout: timeout, write_timeout: timeout) do |http|
        http.request(request)
      end
      status = response.code.to_i
      text = (response.body || '').dup.force_encoding('UTF-8')
      return [status, text] if status.between?(200, 299)

      error = error_of(status, text, "#{method} #{path}")
      return Failure.new(error, false, false, nil) unless RETRY_STATUSES.include?(status)

      Failure.new(error, true, false, retry_after(response['retry-after']))
    rescue Net::OpenTimeout, Net::ReadTimeout, Net::WriteTimeout
      Failure.new(RequestError.new(0, 'TIMEOUT', "#{what}: no reply within #{timeout} s"), true, true, nil)
    rescue *NETWORK_ERRORS => e
      Failure.new(RequestError.new(0, 'NETWORK_ERROR', "#{what}: #{e.message}"), true, true, nil)
    end

    def error_of(status, text, what)
      envelope = JSON.parse(text).fetch('error')
      RequestError.new(status, envelope.fetch('code').to_s, envelope.fetch('message').to_s, envelope['details'])
    rescue JSON::ParserError, KeyError, TypeError, NoMethodError
      RequestError.new(status, "HTTP_#{status}", "#{what}: HTTP #{status}")
    end

    def retry_after(value)
      return nil if value.nil?

      seconds = Float(value, exception: false) || begin
        Time.httpdate(value) - Time.now
      rescue ArgumentError
        nil
      end
      seconds&.clamp(0.0, MAX_RETRY_AFTER)
    end
  end
end
