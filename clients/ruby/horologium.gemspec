Gem::Specification.new do |spec|
  spec.name = 'horologium'
  spec.version = '0.1.0'
  spec.summary = "Horologium's Ruby client: post tool calls, results and events, and a drop-in status sink"
  spec.description = 'Posts tool activity to a Horologium server with retries and idempotency; Horologium::Sink keeps ' \
                     "an AetherCodex-style status sink's call sites (send_status) and lets the server build the preview."
  spec.authors = ['Horologium']
  spec.license = 'MIT'
  spec.files = Dir['lib/**/*.rb'] + ['README.md']
  spec.require_paths = ['lib']
  # The standard library only.
  spec.required_ruby_version = '>= 3.0'
end
