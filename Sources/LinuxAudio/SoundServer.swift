// The sound server (PulseAudio, or PipeWire through pipewire-pulse) as a way to a sound card it holds: while it
// plays on a card, the card's `hw:` device is busy, and a program reaches the card through one of the server's
// outputs (a sink) instead, opened with the server's ALSA plugin. The server is asked for its sinks through its
// client library, loaded at run time (CSoundServer).
internal import CSoundServer

/// One output of the sound server, as far as choosing it for a sound card needs.
public struct SoundServerSink: Sendable, Equatable {
    /// Its name, which the server's ALSA plugins take as the device.
    public var name: String
    public var description: String
    /// The ALSA card it plays on; nil for an output on no card (network, virtual).
    public var card: Int?
    /// Its channel positions in order, as the server names them ("front-left", "rear-left"...).
    public var channelPositions: [String]

    public init(name: String, description: String, card: Int?, channelPositions: [String]) {
        self.name = name
        self.description = description
        self.card = card
        self.channelPositions = channelPositions
    }
}

/// Why the sound server gave no answer.
public struct SoundServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Its client library (libpulse.so.0) is not installed.
        case noClientLibrary
        /// No server runs for this user, or it refused the connection.
        case noServer
        /// It did not answer in time.
        case timedOut
    }

    public let kind: Kind
    /// What failed, as the client library said it.
    public let detail: String

    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .noClientLibrary: "the sound server's client library cannot be loaded (\(detail))"
        case .noServer: "no sound server answers (\(detail))"
        case .timedOut: "the sound server does not answer (\(detail))"
        }
    }
}

public enum SoundServer {
    /// The server's name and version ("pulseaudio 16.1"; PipeWire's says "on PipeWire"), and its sinks.
    public struct Outputs: Sendable, Equatable {
        public var server: String
        public var sinks: [SoundServerSink]

        public init(server: String, sinks: [SoundServerSink]) {
            self.server = server
            self.sinks = sinks
        }
    }

    /// Asks the server for its sinks, waiting at most `timeoutSeconds` for its answer. Starts no server.
    public static func outputs(timeoutSeconds: Double = 1) throws(SoundServerError) -> Outputs {
        var capacity = 16
        while true {
            var sinks = [css_sink](repeating: css_sink(), count: capacity)
            var server = [CChar](repeating: 0, count: 256)
            var detail = [CChar](repeating: 0, count: 512)
            let count = Int(
                css_list_sinks(
                    &sinks, Int32(capacity), Int32(max(1, timeoutSeconds * 1000)), &server, server.count, &detail,
                    detail.count))
            let text = { (characters: [CChar]) in
                String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            if count == Int(CSS_NO_CLIENT_LIBRARY) {
                throw SoundServerError(.noClientLibrary, detail: text(detail))
            } else if count == Int(CSS_NO_SERVER) {
                throw SoundServerError(.noServer, detail: text(detail))
            } else if count < 0 {
                throw SoundServerError(.timedOut, detail: text(detail))
            } else if count > capacity {
                capacity = count
            } else {
                return Outputs(server: text(server), sinks: sinks.prefix(count).map(Self.sink))
            }
        }
    }

    private static func sink(_ raw: css_sink) -> SoundServerSink {
        var raw = raw
        let string = { (pointer: UnsafeRawPointer, size: Int) in
            let bytes = UnsafeRawBufferPointer(start: pointer, count: size)
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let name = string(&raw.name, MemoryLayout.size(ofValue: raw.name))
        let description = string(&raw.description, MemoryLayout.size(ofValue: raw.description))
        let map = string(&raw.channel_map, MemoryLayout.size(ofValue: raw.channel_map))
        return SoundServerSink(
            name: name, description: description, card: raw.card >= 0 ? Int(raw.card) : nil,
            channelPositions: map.split(separator: ",").map(String.init))
    }

    /// The ALSA devices that play on `sink` through the server's ALSA plugins, in the order to try them:
    /// libasound2-plugins' `pulse` (PulseAudio, and PipeWire through pipewire-pulse), then pipewire-alsa's
    /// `pipewire`, which takes the same name.
    public static func alsaDevices(for sink: SoundServerSink) -> [String] {
        ["pulse:DEVICE=\(sink.name)", "pipewire:NODE=\(sink.name)"]
    }

    /// Where the server's ALSA plugins put a stream's channels by count: alsa-lib's order of positions, which
    /// the plugins give the stream, and the server then matches to its sink's positions by name.
    public static func streamPositions(channels: Int) -> [String] {
        Array(["front-left", "front-right", "rear-left", "rear-right", "front-center", "lfe"].prefix(channels))
    }

    /// The sink of `outputs` that plays on `card` with every position of a `channels`-channel stream in the
    /// stream's own order, so that the stream's channels reach the card's channels of the same number unmixed;
    /// or why there is none.
    public static func sink(
        forCard card: Int, channels: Int, in outputs: Outputs
    ) -> Result<SoundServerSink, SoundServerRouteError> {
        let onCard = outputs.sinks.filter { $0.card == card }
        let wanted = streamPositions(channels: channels)
        if let sink = onCard.first(where: { Array($0.channelPositions.prefix(channels)) == wanted }) {
            return .success(sink)
        }
        return .failure(SoundServerRouteError(server: outputs.server, card: card, wanted: wanted, sinks: onCard))
    }
}

extension SoundServer {
    /// The server's output that plays a `channels`-channel stream on card `card` unchanged, with the server's name:
    /// the server asked (`outputs`) and its outputs chosen from (`sink(forCard:channels:in:)`). Fails with why the
    /// server did not answer, or with the outputs it has on the card.
    public static func route(toCard card: Int, channels: Int) throws(SoundServerRouteFailure)
        -> (server: String, sink: SoundServerSink)
    {
        let outputs: Outputs
        do throws(SoundServerError) {
            outputs = try self.outputs()
        } catch {
            throw .noAnswer(error)
        }
        switch sink(forCard: card, channels: channels, in: outputs) {
        case .success(let sink): return (outputs.server, sink)
        case .failure(let error): throw .noOutput(error)
        }
    }
}

/// Why no output of the sound server reaches a card: the server gave no answer, or has no fitting output on it.
public enum SoundServerRouteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case noAnswer(SoundServerError)
    case noOutput(SoundServerRouteError)

    public var description: String {
        switch self {
        case .noAnswer(let error): "\(error)"
        case .noOutput(let error): "\(error)"
        }
    }
}

/// The server holds a card but offers no sink that plays a stream's channels on it unchanged.
public struct SoundServerRouteError: Error, Sendable, Equatable, CustomStringConvertible {
    public let server: String
    public let card: Int
    /// The positions the stream needs, in order.
    public let wanted: [String]
    /// The server's sinks on the card (none when it offers none).
    public let sinks: [SoundServerSink]

    public var description: String {
        guard !sinks.isEmpty else {
            return "the sound server (\(server)) holds sound card \(card) but offers no output on it: turn its "
                + "profile on (pavucontrol's Configuration tab, or `pactl set-card-profile`)"
        }
        let found = sinks.map { "\($0.name) (\($0.channelPositions.joined(separator: ",")))" }
        return "the sound server (\(server)) plays sound card \(card) through \(found.joined(separator: ", ")), "
            + "not with the channels \(wanted.joined(separator: ",")): choose the card's \(wanted.count)-channel "
            + "profile (analog-surround-40 for 4 channels, in pavucontrol or with `pactl set-card-profile`)"
    }
}
