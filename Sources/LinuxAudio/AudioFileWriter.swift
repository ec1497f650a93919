public import AudioRendering
internal import CSndfile

/// The file formats `AudioFile.write` makes: the ones the project's sounds and tests need, all through libsndfile.
public enum AudioFileFormat: String, Sendable, CaseIterable {
    /// WAV, 16-bit integer samples.
    case wav16
    /// WAV, 32-bit float samples (lossless for what the renderer makes).
    case wavFloat
    /// AIFF, 16-bit integer samples.
    case aiff16
    /// FLAC, 16-bit.
    case flac
    /// Ogg Vorbis (lossy).
    case oggVorbis
    /// Ogg Opus (lossy; 8, 12, 16, 24 or 48 kHz only).
    case opus
    /// MP3 (MPEG-1/2 layer III, lossy).
    case mp3

    var sndfileFormat: Int32 {
        switch self {
        case .wav16: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        case .wavFloat: Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        case .aiff16: Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16)
        case .flac: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        case .oggVorbis: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        case .opus: Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
        case .mp3: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        }
    }
}

extension AudioFile {
    /// Writes `clip` to `path` in `format`, replacing any file there. Samples outside -1 ... 1 are clipped by
    /// integer formats.
    public static func write(_ clip: AudioClip, to path: String, format: AudioFileFormat) throws(AudioFileError) {
        var info = SF_INFO()
        info.samplerate = Int32(clip.sampleRate.rounded())
        info.channels = Int32(clip.channelCount)
        info.format = format.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(
                path: path,
                reason: "libsndfile cannot write \(format.rawValue) at \(info.samplerate) Hz, \(info.channels) channels"
            )
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        let written = clip.samples.withUnsafeBufferPointer {
            sf_writef_float(file, $0.baseAddress, sf_count_t(clip.frameCount))
        }
        let failure = written == sf_count_t(clip.frameCount) ? nil : String(cString: sf_strerror(file))
        let closed = sf_close(file)
        if let failure { throw AudioFileError(path: path, reason: "writing failed: \(failure)") }
        guard closed == 0 else {
            throw AudioFileError(path: path, reason: "closing failed: \(String(cString: sf_error_number(closed)))")
        }
    }
}
