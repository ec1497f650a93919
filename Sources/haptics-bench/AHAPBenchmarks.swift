// AHAP parse + validate: the 160 KB studio-export.ahap fixture (target: p50 under 5 ms in a release build) and a
// whole set of files (the corpus when AHAP_CORPUS names it, otherwise the fixtures), each against Foundation's
// JSONSerialization of the same bytes measured in the same run, plus the heap the parsed models hold.
import AHAP
import Foundation
import HapticTestDevices

enum AHAPBenchmarkError: Error, CustomStringConvertible {
    case fileRejected(String)

    var description: String {
        switch self {
        case .fileRejected(let file): "AHAP file does not load: \(file)"
        }
    }
}

/// The measured set's files with their paths inside it, read once, and the set's name.
private func setContents() throws -> (name: String, files: [(name: String, data: Data)]) {
    let set = try AHAPFixtures.corpusOrFixtures()
    let root = set.root.path
    return (
        set.name, try set.files.map { url in (String(url.path.dropFirst(root.count + 1)), try Data(contentsOf: url)) }
    )
}

/// An estimate of a model's memory from its layout: inline sizes, array storage (a 32-byte header per
/// non-empty array on 64-bit Swift) and out-of-line string bytes (strings over 15 UTF-8 bytes).
private func estimatedBytes(of pattern: HapticPattern) -> Int {
    let arrayHeader = 32
    let smallStringCapacity = 15
    func array<T>(_ elements: [T]) -> Int {
        elements.isEmpty ? 0 : arrayHeader + elements.count * MemoryLayout<T>.stride
    }
    func string(_ text: String?) -> Int {
        guard let text, text.utf8.count > smallStringCapacity else { return 0 }
        return arrayHeader + text.utf8.count
    }
    var bytes = MemoryLayout<HapticPattern>.stride
    bytes += array(pattern.events) + array(pattern.dynamicParameters) + array(pattern.parameterCurves)
    for event in pattern.events { bytes += array(event.parameters) + string(event.waveformPath) }
    for curve in pattern.parameterCurves { bytes += array(curve.controlPoints) }
    if let metadata = pattern.metadata {
        bytes += arrayHeader + metadata.entries.count * MemoryLayout<(String, String)>.stride
        for (key, value) in metadata.entries { bytes += string(key) + string(value) }
    }
    return bytes
}

/// The 1-minute load average from `/proc/loadavg`: on a shared 2-core machine, absolute times scale with it, so
/// the report says how busy the machine was next to the absolute target.
private func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
        let first = text.split(separator: " ").first
    else { return "unknown" }
    return String(first)
}

private func kilobytes(_ bytes: Int) -> String { String(format: "%.1f KB", Double(bytes) / 1024) }

let ahapBenchmarks = BenchmarkGroup(name: "ahap") {
    let (setName, corpus) = try setContents()
    let studio = (name: "studio-export.ahap", data: try Data(contentsOf: try AHAPFixtures.file("studio-export.ahap")))
    for file in corpus + [studio] where !AHAPValidator.validate(data: file.data).loads {
        throw AHAPBenchmarkError.fileRejected(file.name)
    }
    let iterations = 200
    var results: [BenchmarkResult] = []

    // The baseline is Foundation reading the same bytes into property-list objects: what a parser built on
    // Foundation pays before it has validated or modelled anything. (On Linux, JSONSerialization has no
    // `.json5Allowed` option but accepts the trailing commas of Apple's samples by default.)
    let studioBaseline = measure("JSONSerialization studio-export.ahap (baseline)", iterations: iterations) {
        _ = try? JSONSerialization.jsonObject(with: studio.data)
    }
    let studioOurs = measure(
        "parse+validate studio-export.ahap (\(studio.data.count / 1024) KB)", iterations: iterations
    ) {
        precondition(AHAPValidator.validate(data: studio.data).loads)
    }
    let studioFoundationModel = measure(
        "JSONSerialization + model from dictionary, studio-export", iterations: iterations
    ) {
        if let object = try? JSONSerialization.jsonObject(with: studio.data) as? [String: Any] {
            precondition(AHAPValidator.validate(dictionary: object).loads)
        }
    }
    let targetMilliseconds = 5.0
    let verdict = studioOurs.percentile(50) < targetMilliseconds ? "meets" : "MISSES"
    results.append(BenchmarkResult(measurement: studioBaseline))
    results.append(
        BenchmarkResult(
            measurement: studioOurs, baseline: studioBaseline.name,
            ratio: studioOurs.percentile(50) / studioBaseline.percentile(50),
            note: "\(verdict) the \(format(targetMilliseconds)) ms target at load average \(loadAverage())"))
    results.append(
        BenchmarkResult(
            measurement: studioFoundationModel, baseline: studioOurs.name,
            ratio: studioFoundationModel.percentile(50) / studioOurs.percentile(50),
            note: "the same model through Foundation"))

    let corpusBytes = corpus.reduce(0) { $0 + $1.data.count }
    let corpusBaseline = measure("JSONSerialization whole \(setName) (baseline)", iterations: iterations) {
        for file in corpus { _ = try? JSONSerialization.jsonObject(with: file.data) }
    }
    let corpusOurs = measure(
        "parse+validate whole \(setName) (\(corpus.count) files, \(corpusBytes / 1024) KB)", iterations: iterations
    ) {
        for file in corpus { precondition(AHAPValidator.validate(data: file.data).loads) }
    }
    results.append(BenchmarkResult(measurement: corpusBaseline))
    results.append(
        BenchmarkResult(
            measurement: corpusOurs, baseline: corpusBaseline.name,
            ratio: corpusOurs.percentile(50) / corpusBaseline.percentile(50)))

    // Memory: the heap growth while every parsed model is held, next to the layout estimate.
    // A hundred copies of the set, so that the growth spans thousands of pages and outgrows what earlier
    // measurements freed (which the allocator reuses without growing the process).
    let copies = 100
    let residentBefore = ProcessResources.residentBytes()
    let models = (0..<copies).flatMap { _ in corpus.compactMap { try? HapticPattern(data: $0.data) } }
    let residentAfter = ProcessResources.residentBytes()
    let estimate = models.reduce(0) { $0 + estimatedBytes(of: $1) } / copies
    let studioEstimate = (try? HapticPattern(data: studio.data)).map(estimatedBytes(of:)) ?? 0
    var memoryNote = "layout estimate; studio-export alone \(kilobytes(studioEstimate))"
    if let residentBefore, let residentAfter {
        let perCorpus = (residentAfter - residentBefore) / copies
        memoryNote += "; measured resident growth per \(setName) copy (\(copies) held): \(kilobytes(perCorpus))"
    }
    memoryNote += "; source text \(kilobytes(corpusBytes))"
    results.append(
        BenchmarkResult(
            measurement: Measurement(
                name: "parsed models of the whole \(setName)", unit: "KB", samples: [Double(estimate) / 1024]),
            note: memoryNote))
    withExtendedLifetime(models) {}
    return results
}
