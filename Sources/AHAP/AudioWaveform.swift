/// The identifier an engine gives an audio file registered with it (Core Haptics' `CHHapticAudioResourceID`):
/// an `AudioCustom` event made with it plays that file on that engine. It means nothing to another engine, nor
/// to another process, and a pattern written out keeps the number, not the file.
public struct AudioResourceID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    public var description: String { "audio resource \(rawValue)" }

    /// The largest identifier a pattern can carry: every one up to it is a JSON number read back exactly.
    public static let maximumRawValue: UInt = 1 << 53
}

/// What an `AudioCustom` event plays: a file its pattern names (`EventWaveformPath` as text), or an audio
/// resource registered with the engine (`EventWaveformPath` as a number, as Core Haptics' pattern dictionaries
/// carry it). A string literal is a path.
public enum AudioWaveform: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    case path(String)
    case resource(AudioResourceID)

    public init(stringLiteral path: String) { self = .path(path) }

    /// The path as the pattern writes it, or "audio resource N".
    public var description: String {
        switch self {
        case .path(let path): path
        case .resource(let id): id.description
        }
    }
}
