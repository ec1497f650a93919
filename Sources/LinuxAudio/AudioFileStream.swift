internal import CSamplerate
internal import CSndfile
internal import Glibc
@_spi(Internals) internal import LinuxSystem

/// A file decoded a block at a time and converted to an output's rate as it goes (libsndfile, then
/// libsamplerate's streaming converter): for music, which is too long to decode whole, and loops, which start
/// again with `rewind()`. One owner reads it; it is not for sharing between threads.
public final class AudioFileStream {
    public let path: String
    /// The rate of the frames `read` returns.
    public let sampleRate: Int
    /// The file's own rate.
    public let fileSampleRate: Int
    /// 1 or 2: a file of more channels gives its first two, as `AudioFile.decode` does.
    public let channelCount: Int
    /// The file's length in seconds, as its header gives it.
    public let duration: Double
    private let fileChannels: Int
    private let file: OpaquePointer
    /// The descriptor `file` reads, closed after it.
    private let fd: Int32
    /// The converter; nil when the file is at the output's rate already.
    private let converter: OpaquePointer?
    /// Decoded frames not yet converted (interleaved, `channelCount` wide), and whether the file is used up.
    private var pending: [Float] = []
    private var fileEnded = false
    private var finished = false

    /// The frames decoded from the file per block: 4,096 of two channels, fewer of more (`fileBlockFrames`), so that
    /// a block stays 32 KB whatever the file claims.
    static let blockFrames = 4096
    private var fileBlockFrames: Int { max(1, Self.blockFrames * 2 / fileChannels) }

    /// What is wrong with the file at `path` as a sound played at `sampleRate` (an engine's, by default): nil when
    /// it opens as a stream at that rate, else why not (`haptics validate` says it of an `AudioCustom` sound).
    public static func problem(
        opening path: String, at sampleRate: Int = AudioOutputs.defaultSampleRate
    ) -> String? {
        do {
            _ = try AudioFileStream(path: path, sampleRate: sampleRate)
            return nil
        } catch {
            // libsndfile's sentences end with a full stop; this one goes on in a message.
            let reason = error.reason.hasSuffix(".") ? String(error.reason.dropLast()) : error.reason
            return "cannot be decoded: \(reason)"
        }
    }

    public init(path: String, sampleRate: Int) throws(AudioFileError) {
        var info = SF_INFO()
        let (file, fd) = try AudioFile.open(path, &info)
        let rates = info.samplerate > 0 && info.channels > 0 && sampleRate > 0
        guard rates, AudioFile.canConvert(from: Double(info.samplerate), to: sampleRate) else {
            sf_close(file)
            Sys.close(fd)
            throw AudioFileError(
                path: path,
                reason: "cannot convert \(info.channels) channels at \(info.samplerate) Hz to \(sampleRate) Hz"
                    + (rates ? AudioFile.convertibleRatios : ""))
        }
        self.path = path
        self.sampleRate = sampleRate
        fileSampleRate = Int(info.samplerate)
        fileChannels = Int(info.channels)
        duration = Double(info.frames) / Double(info.samplerate)
        channelCount = min(fileChannels, 2)
        self.file = file
        self.fd = fd
        if fileSampleRate == sampleRate {
            converter = nil
        } else {
            var error: Int32 = 0
            guard let state = src_new(AudioFile.converter, Int32(min(Int(info.channels), 2)), &error) else {
                sf_close(file)
                Sys.close(fd)
                throw AudioFileError(path: path, reason: "libsamplerate: \(String(cString: src_strerror(error)))")
            }
            converter = state
        }
    }

    deinit {
        sf_close(file)
        Sys.close(fd)
        if let converter { src_delete(converter) }
    }

    /// Whether every frame has been read.
    public var isFinished: Bool { finished }

    /// Up to `frames` more frames (interleaved, `channelCount` samples each); fewer only at the end of the file,
    /// none after it.
    public func read(frames: Int) throws(AudioFileError) -> [Float] {
        var output: [Float] = []
        // A block's worth at most: what is asked for may be far more than the file holds.
        output.reserveCapacity(min(max(frames, 0), Self.blockFrames) * channelCount)
        while output.count < frames * channelCount, !finished {
            if pending.isEmpty, !fileEnded { try decodeBlock() }
            let wanted = frames - output.count / channelCount
            guard let converter else {
                let taken = min(wanted * channelCount, pending.count)
                output += pending[..<taken]
                pending.removeFirst(taken)
                finished = fileEnded && pending.isEmpty
                continue
            }
            let (used, produced) = try convert(into: &output, wanted: wanted, converter)
            pending.removeFirst(used * channelCount)
            finished = fileEnded && pending.isEmpty && produced == 0
        }
        return output
    }

    /// Back to the first frame, the converter's memory cleared: the next `read` starts the file again.
    public func rewind() throws(AudioFileError) {
        guard sf_seek(file, 0, SEEK_SET) == 0 else {
            throw AudioFileError(
                path: path, reason: "seeking to the start failed: \(String(cString: sf_strerror(file)))")
        }
        if let converter { src_reset(converter) }
        pending = []
        fileEnded = false
        finished = false
    }

    /// Decodes the next block into `pending`, keeping the first two channels.
    private func decodeBlock() throws(AudioFileError) {
        let frames = fileBlockFrames
        var block = [Float](repeating: 0, count: frames * fileChannels)
        let read = block.withUnsafeMutableBufferPointer {
            sf_readf_float(file, $0.baseAddress, sf_count_t(frames))
        }
        guard read >= 0, sf_error(file) == 0 else {
            throw AudioFileError(path: path, reason: "reading failed: \(String(cString: sf_strerror(file)))")
        }
        if read < frames { fileEnded = true }
        for frame in 0..<Int(read) {
            for channel in 0..<channelCount { pending.append(block[frame * fileChannels + channel].finiteSample) }
        }
    }

    /// Converts what `pending` holds into up to `wanted` frames appended to `output`; returns the input frames
    /// used and the output frames made.
    private func convert(into output: inout [Float], wanted: Int, _ converter: OpaquePointer) throws(AudioFileError)
        -> (used: Int, produced: Int)
    {
        var converted = [Float](repeating: 0, count: wanted * channelCount)
        let (status, used, produced) = pending.withUnsafeBufferPointer { input in
            converted.withUnsafeMutableBufferPointer { out in
                var data = SRC_DATA()
                data.data_in = input.baseAddress
                data.input_frames = input.count / channelCount
                data.data_out = out.baseAddress
                data.output_frames = wanted
                data.src_ratio = Double(sampleRate) / Double(fileSampleRate)
                data.end_of_input = fileEnded ? 1 : 0
                let status = src_process(converter, &data)
                return (status, Int(data.input_frames_used), Int(data.output_frames_gen))
            }
        }
        guard status == 0 else {
            throw AudioFileError(path: path, reason: "libsamplerate: \(String(cString: src_strerror(status)))")
        }
        output += converted[..<(produced * channelCount)]
        return (used, produced)
    }
}
