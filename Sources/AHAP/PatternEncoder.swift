// The model back to AHAP: a JSON tree in the key order Apple's own files use, then text or a property-list-style
// dictionary. Optional keys the model does not hold (`nil`) are not written, so a file that omitted them
// round-trips without gaining defaults.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

enum PatternEncoder {
    static func tree(of pattern: HapticPattern) -> JSONValue {
        var document: [JSONMember] = []
        if let version = pattern.version {
            document.append(JSONMember(key: "Version", value: .number(version)))
        }
        if let metadata = pattern.metadata {
            // Dictionary order is random; sorting keeps the output stable from run to run.
            let entries = metadata.entries.sorted { $0.key < $1.key }.map {
                JSONMember(key: $0.key, value: .string($0.value))
            }
            document.append(JSONMember(key: "Metadata", value: .object(entries)))
        }
        var entries: [JSONValue] = []
        entries.reserveCapacity(
            pattern.events.count + pattern.dynamicParameters.count + pattern.parameterCurves.count)
        for event in pattern.events {
            entries.append(.object([JSONMember(key: "Event", value: tree(of: event))]))
        }
        for parameter in pattern.dynamicParameters {
            let body: [JSONMember] = [
                JSONMember(key: "ParameterID", value: .string(parameter.parameterID.rawValue)),
                JSONMember(key: "Time", value: .number(parameter.relativeTime)),
                JSONMember(key: "ParameterValue", value: .number(parameter.value)),
            ]
            entries.append(.object([JSONMember(key: "Parameter", value: .object(body))]))
        }
        for curve in pattern.parameterCurves {
            let points: [JSONValue] = curve.controlPoints.map { point in
                .object([
                    JSONMember(key: "Time", value: .number(point.relativeTime)),
                    JSONMember(key: "ParameterValue", value: .number(point.value)),
                ])
            }
            let body: [JSONMember] = [
                JSONMember(key: "ParameterID", value: .string(curve.parameterID.rawValue)),
                JSONMember(key: "Time", value: .number(curve.relativeTime)),
                JSONMember(key: "ParameterCurveControlPoints", value: .array(points)),
            ]
            entries.append(.object([JSONMember(key: "ParameterCurve", value: .object(body))]))
        }
        document.append(JSONMember(key: "Pattern", value: .array(entries)))
        return .object(document)
    }

    private static func tree(of event: HapticEvent) -> JSONValue {
        var body: [JSONMember] = [
            JSONMember(key: "Time", value: .number(event.relativeTime)),
            JSONMember(key: "EventType", value: .string(event.type.rawValue)),
        ]
        if let duration = event.duration {
            body.append(JSONMember(key: "EventDuration", value: .number(duration)))
        }
        // A registered resource is written as Core Haptics writes it in a pattern dictionary: its number.
        if let resource = event.audioResourceID {
            body.append(JSONMember(key: "EventWaveformPath", value: .number(writtenNumber(of: resource))))
        } else if let path = event.waveformPath {
            body.append(JSONMember(key: "EventWaveformPath", value: .string(path)))
        }
        if let flag = event.waveformUsesVolumeEnvelope {
            body.append(JSONMember(key: "EventWaveformUseVolumeEnvelope", value: .bool(flag)))
        }
        if let flag = event.waveformLoopEnabled {
            body.append(JSONMember(key: "EventWaveformLoopEnabled", value: .bool(flag)))
        }
        let parameters: [JSONValue] = event.parameters.map { parameter in
            .object([
                JSONMember(key: "ParameterID", value: .string(parameter.parameterID.rawValue)),
                JSONMember(key: "ParameterValue", value: .number(parameter.value)),
            ])
        }
        body.append(JSONMember(key: "EventParameters", value: .array(parameters)))
        return .object(body)
    }

    /// The number an audio resource is written as: its ID, exact up to `AudioResourceID.maximumRawValue`. One
    /// above that (a pattern made in code can hold any `UInt`) is no `Double` in every case: 2^53 + 1 would round
    /// down to 2^53, another resource. It is written as the nearest `Double` above the largest instead, or its own
    /// when larger, so that reading it back refuses it (and `validationDiagnostics()` names it) rather than reading
    /// another resource.
    private static func writtenNumber(of resource: AudioResourceID) -> Double {
        let largest = Double(AudioResourceID.maximumRawValue)
        guard resource.rawValue > AudioResourceID.maximumRawValue else { return Double(resource.rawValue) }
        return Swift.max(Double(resource.rawValue), largest.nextUp)
    }

    // MARK: Dictionaries

    /// A JSON tree as Foundation-style property-list values: `[String: Any]`, `[Any]`, `String`, `Double`, `Bool`.
    /// `null` (which AHAP never needs) becomes an empty string, since `Any` has no portable null without
    /// Foundation's `NSNull`.
    static func plistValue(of value: JSONValue) -> Any {
        switch value {
        case .object(let members):
            var dictionary: [String: Any] = [:]
            for member in members { dictionary[member.key] = plistValue(of: member.value) }
            return dictionary
        case .array(let elements): return elements.map(plistValue(of:))
        case .string(let text): return text
        case .number(let number): return number
        case .bool(let flag): return flag
        case .null: return ""
        }
    }

    /// Whether `value` is Foundation's `NSNull`, recognised by its type's name: this module does not import
    /// Foundation, so that no program or library linking it statically carries Foundation and the ICU data it
    /// brings (34 MB) for one type check. Its callers' dictionaries come from Foundation, which then is loaded.
    static func isFoundationNull(_ value: Any) -> Bool {
        _typeName(type(of: value), qualified: true) == "Foundation.NSNull"
    }

    /// Whether `value` is Foundation's boolean `NSNumber`, what `JSONSerialization` makes of `true` and `false`
    /// and `NSNumber(value: Bool)` makes, recognised by its type's name as `isFoundationNull` recognises `NSNull`.
    /// Any `NSNumber` casts to `Bool` (and to `Double`), so the cast alone cannot tell `true` from the number 1.
    static func isFoundationBoolean(_ value: Any) -> Bool {
        _typeName(type(of: value), qualified: true) == "Foundation.__NSCFBoolean"
    }

    /// Converts a property-list-style value into a JSON tree. Numbers may be any Swift integer or floating type,
    /// `Decimal`, or Foundation's `NSNumber` (which casts to `Double` when Foundation is loaded). `NSNull`, what
    /// `JSONSerialization` makes of `null`, is `null`, as in text: an optional key holding it reads as absent; and
    /// its boolean `NSNumber`, what it makes of `true` and `false`, is a boolean, as in text.
    static func jsonValue(
        of value: Any, path: inout [JSONPathComponent], depth: Int, limits: AHAPLimits,
        count: inout Int
    ) throws(JSONReadError) -> JSONValue {
        count += 1
        guard count <= limits.maximumJSONValues else {
            throw JSONReadError(
                code: .limitExceeded, message: "the dictionary holds more than \(limits.maximumJSONValues) values",
                offset: 0, path: path)
        }
        // A dictionary or an array at `depth` is the `depth + 1`th level of nesting, as the text reader counts
        // levels: the top dictionary is the first.
        let isContainer = value is [String: Any] || value is [Any]
        guard !isContainer || depth < limits.maximumDepth else {
            throw JSONReadError(
                code: .limitExceeded, message: "nesting deeper than \(limits.maximumDepth) levels", offset: 0,
                path: path)
        }
        switch value {
        case _ where isFoundationNull(value):
            return .null
        case let text as String:
            return .string(text)
        case let flag as Bool where type(of: value) == Bool.self || isFoundationBoolean(value):
            return .bool(flag)
        case let dictionary as [String: Any]:
            var members: [JSONMember] = []
            // Sorted so that diagnostics come out in a stable order; dictionaries have none of their own.
            for key in dictionary.keys.sorted() {
                guard let element = dictionary[key] else { continue }
                path.append(.key(key))
                members.append(
                    JSONMember(
                        key: key,
                        value: try jsonValue(of: element, path: &path, depth: depth + 1, limits: limits, count: &count))
                )
                path.removeLast()
            }
            return .object(members)
        case let array as [Any]:
            var elements: [JSONValue] = []
            for (index, element) in array.enumerated() {
                path.append(.index(index))
                elements.append(
                    try jsonValue(of: element, path: &path, depth: depth + 1, limits: limits, count: &count))
                path.removeLast()
            }
            return .array(elements)
        default:
            guard let number = numericValue(of: value) else {
                throw JSONReadError(
                    code: .wrongType, message: "a value of type \(type(of: value)) has no AHAP meaning", offset: 0,
                    path: path)
            }
            guard number.isFinite else {
                throw JSONReadError(
                    code: .nonFiniteNumber, message: "NaN and Infinity are not numbers AHAP can hold", offset: 0,
                    path: path)
            }
            return .number(number)
        }
    }

    /// A number of any Swift numeric type as a `Double` (rounded to the nearest), as Core Haptics takes each
    /// through `NSNumber`: every integer and binary floating-point type (`Int8`, `UInt16`, `Float16`, `CGFloat`...)
    /// and `Decimal` (through its exact decimal text).
    private static func numericValue(of value: Any) -> Double? {
        switch value {
        case let number as Double: number
        case let number as any BinaryFloatingPoint: Double(number)
        case let number as any BinaryInteger: Double(number)
        case let number as Decimal: Double(number.description)
        default: nil
        }
    }
}
