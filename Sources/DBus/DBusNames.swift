import CDBus
import Glibc

/// Checks of names and paths, so nothing invalid reaches libdbus (whose argument checks abort
/// the process). Wrap `dbus_validate_*`.
public enum DBusNames {
    /// Whether `path` is a valid object path (`/`, `/a/b_c`). Wraps `dbus_validate_path`.
    public static func isValidObjectPath(_ path: String) -> Bool {
        passes(path, dbus_validate_path)
    }

    /// Whether `name` is a valid interface name. Wraps `dbus_validate_interface`.
    public static func isValidInterface(_ name: String) -> Bool {
        passes(name, dbus_validate_interface)
    }

    /// Whether `name` is a valid member (method or signal) name. Wraps `dbus_validate_member`.
    public static func isValidMember(_ name: String) -> Bool {
        passes(name, dbus_validate_member)
    }

    /// Whether `name` is a valid bus name, unique (`:1.5`) or well-known. Wraps `dbus_validate_bus_name`.
    public static func isValidBusName(_ name: String) -> Bool {
        passes(name, dbus_validate_bus_name)
    }

    /// Whether `name` is a valid error name. Wraps `dbus_validate_error_name`.
    public static func isValidErrorName(_ name: String) -> Bool {
        passes(name, dbus_validate_error_name)
    }
}

/// Checks of type signatures. Wrap `dbus_signature_validate*` and `dbus_type_is_basic`.
public enum DBusSignatures {
    /// Whether `signature` is a valid signature (any number of complete types).
    public static func isValid(_ signature: String) -> Bool {
        passes(signature, dbus_signature_validate)
    }

    /// Whether `signature` is exactly one complete type.
    public static func isSingleCompleteType(_ signature: String) -> Bool {
        // One code, the common case (a basic type or a variant), is answered without libdbus,
        // whose check of a signature costs about a thousand instructions.
        if signature.utf8.count == 1, let code = signature.utf8.first {
            return isBasicCode(code) || code == UInt8(ascii: "v")
        }
        return passes(signature, dbus_signature_validate_single)
    }

    /// Whether `signature` is one basic type (allowed as a dictionary key).
    public static func isBasicType(_ signature: String) -> Bool {
        guard signature.utf8.count == 1, let code = signature.utf8.first else { return false }
        return isBasicCode(code)
    }

    /// Whether `code` is a basic type's. `dbus_type_is_basic` aborts the process when given a
    /// code that is no type at all, so that is asked first.
    private static func isBasicCode(_ code: UInt8) -> Bool {
        dbus_type_is_valid(Int32(code)) != 0 && dbus_type_is_basic(Int32(code)) != 0
    }
}

/// Whether `text` has no NUL (which would end it early for libdbus) and passes `validate`, one
/// of libdbus's `dbus_validate_*` or `dbus_signature_validate*` checks.
private func passes(
    _ text: String, _ validate: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
) -> Bool {
    !containsNUL(text) && text.withCString { validate($0, nil) != 0 }
}

/// Whether `text` has a NUL byte, which would end it early for libdbus: `memchr` over its UTF-8
/// where that is contiguous (a native string's is), otherwise a walk.
func containsNUL(_ text: String) -> Bool {
    let found = text.utf8.withContiguousStorageIfAvailable { bytes in
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(start, 0, bytes.count) != nil
    }
    return found ?? text.utf8.contains(0)
}
