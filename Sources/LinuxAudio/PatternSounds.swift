public import AHAP
public import AudioRendering
@_spi(Internals) internal import LinuxSystem

/// The files a pattern's `AudioCustom` events name, found, decoded and converted to an output's rate once,
/// ahead of playing: what `AudioMixer` reads by `EventWaveformPath`.
///
/// A relative `EventWaveformPath` is looked for in each of `directories` in turn (a caller passes the AHAP
/// file's folder first, then its resource folder); an absolute one is used as it is. A path with a `..`
/// component is refused rather than followed out of those folders. Nothing here throws: a file that cannot be
/// found or decoded is kept in `failures` with the reason, and its events stay silent.
public struct PatternSounds: Sendable {
    /// Decoded clips by `EventWaveformPath` as the pattern writes it (`AudioWaveform.path`).
    public let clips: [AudioWaveform: AudioClip]
    /// Why each path that has no clip has none, by `EventWaveformPath`.
    public let failures: [String: AudioFileError]

    public init(pattern: HapticPattern, directories: [String], sampleRate: Int) {
        var clips: [AudioWaveform: AudioClip] = [:]
        var failures: [String: AudioFileError] = [:]
        for path in Self.paths(in: pattern) where clips[.path(path)] == nil && failures[path] == nil {
            do {
                clips[.path(path)] = try AudioFile.load(try Self.locate(path, in: directories), sampleRate: sampleRate)
            } catch {
                failures[path] = error
            }
        }
        self.clips = clips
        self.failures = failures
    }

    /// Each clip's length in seconds, what `AudioSchedule` needs.
    public var clipDurations: [AudioWaveform: Double] { clips.mapValues(\.duration) }

    /// The files the pattern's `AudioCustom` events name, in pattern order (a registered resource names none).
    public static func paths(in pattern: HapticPattern) -> [String] {
        pattern.events.compactMap { event in
            if case .path(let path) = event.audioWaveform { path } else { nil }
        }
    }

    /// The file `path` names (`AudioResourcePath`): itself when absolute, else the first of `directories` that
    /// holds it.
    static func locate(_ path: String, in directories: [String]) throws(AudioFileError) -> String {
        if let refusal = AudioResourcePath.refusal(of: path) {
            throw AudioFileError(path: path, reason: "the path \(refusal)")
        }
        if let found = AudioResourcePath.candidates(for: path, in: directories).first(where: Sys.exists) {
            return found
        }
        if path.hasPrefix("/") { throw AudioFileError(path: path, reason: "no such file") }
        let searched = directories.isEmpty ? "no folder to look in" : "not in " + directories.joined(separator: ", ")
        throw AudioFileError(path: path, reason: "no such file: \(searched)")
    }
}
