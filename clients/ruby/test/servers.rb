# frozen_string_literal: true

# Servers for the tests: the real Horologium server (a child process, as `npm start` runs it) and a
# scripted stub for the failures a real server cannot be made to produce on demand.
require 'json'
require 'net/http'
require 'socket'

REPO = File.expand_path('../../..', __dir__)

def free_port
  server = TCPServer.new('127.0.0.1', 0)
  server.addr[1]
ensure
  server&.close
end

# `node --import tsx src/server.ts` on a free port with a memory store; +settings+ are more environment variables.
class RealServer
  attr_reader :url

  def initialize(**settings)
    port = free_port
    @url = "http://127.0.0.1:#{port}"
    env = { 'PORT' => port.to_s, 'HOROLOGIUM_STORE' => 'memory:', 'LOG_LEVEL' => 'warn' }.merge(settings.transform_keys(&:to_s))
    @pid = Process.spawn(env, 'node', '--import', 'tsx', 'src/server.ts', chdir: REPO, out: File::NULL, err: File::NULL)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
    until Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      begin
        return if Net::HTTP.get_response(URI("#{@url}/healthz")).code == '200'
      rescue SystemCallError, IOError
        sleep 0.1
      end
    end
    stop
    raise 'the server did not start within 30 s'
  end

  def get(path)
    JSON.parse(Net::HTTP.get(URI("#{@url}#{path}")))
  end

  def get_text(path)
    Net::HTTP.get(URI("#{@url}#{path}")).force_encoding('UTF-8')
  end

  def stop
    Process.kill('TERM', @pid)
    Process.wait(@pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end
end

# Answers each request with the next scripted reply: [status, headers, body] or :hang (no reply for
# +hang+ seconds). Records what it received: [method, path, body, authorization], and each
# request's headers in +headers+.
class StubServer
  attr_reader :url, :received, :headers

  def initialize(replies, hang: 2.0)
    @replies = replies.dup
    @received = []
    @headers = []
    @server = TCPServer.new('127.0.0.1', 0)
    @url = "http://127.0.0.1:#{@server.addr[1]}"
    @thread = Thread.new do
      loop do
        client = @server.accept
        Thread.new(client) { |c| serve(c, hang) }
      rescue IOError
        break
      end
    end
  end

  def stop
    @server.close
    @thread.join(2)
  end

  private

  def serve(client, hang)
    method, path = client.gets.to_s.split
    headers = {}
    while (line = client.gets) && line != "\r\n"
      key, value = line.split(':', 2)
      headers[key.downcase] = value.strip
    end
    body = client.read(headers['content-length'].to_i)
    @received << [method, path, body, headers['authorization']]
    @headers << headers
    reply = @replies.shift || [500, {}, 'no more replies']
    if reply == :hang
      sleep hang
    else
      status, extra, payload = reply
      data = payload.is_a?(String) ? payload : JSON.generate(payload)
      head = ["HTTP/1.1 #{status} X", 'content-type: application/json', "content-length: #{data.bytesize}", 'connection: close']
      head += extra.map { |k, v| "#{k}: #{v}" }
      client.write(head.join("\r\n") + "\r\n\r\n" + data)
    end
  ensure
    client.close
  end
end
