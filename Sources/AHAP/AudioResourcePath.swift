/// Where an `AudioCustom` event's `EventWaveformPath` leads: the one rule the engine's sound loader and the
/// validator follow. An absolute path is the file itself; a relative one is looked for inside each resource folder
/// in turn (a caller passes the pattern's own folder first). An empty path, one with a `..` component (it would
/// leave those folders), or one holding a NUL (the system would read the path only up to it, another file) names
/// no file at all.
public enum AudioResourcePath {
    /// Why `path` names no file wherever it is looked for, as the end of a sentence about the path ("is empty");
    /// nil when it may name one.
    public static func refusal(of path: String) -> String? {
        if path.isEmpty { return "is empty" }
        if path.utf8.contains(0) { return "holds a NUL character, which no file name can" }
        if path.split(separator: "/").contains("..") { return "leaves its folder (a '..' component)" }
        return nil
    }

    /// The files `path` may name, in the order they are looked for: itself when absolute, else the path inside
    /// each of `directories`. Nothing is looked at on disk.
    public static func candidates(for path: String, in directories: [String]) -> [String] {
        if path.hasPrefix("/") { return [path] }
        return directories.map { $0.hasSuffix("/") ? $0 + path : $0 + "/" + path }
    }
}
