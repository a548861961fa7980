import NotifyBus

/// Display brightness from udev's `backlight` devices, published as the specification's
/// `display/<name>/brightness` (0.0–1.0; see `BacklightReading` for the mapping).
///
/// ```swift
/// let bus = NotificationBus()
/// let display = DisplaySource(bus: bus)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await display.run() }     // until cancelled
///     for await notification in bus.subscribe(["display/**"]).notifications { … }
/// }
/// ```
///
/// It watches the `backlight` subsystem as `PowerSupplySource` watches `power_supply`: a scan at
/// start, `add`/`change` uevents (the kernel sends `change` when the brightness is set through the
/// backlight class), `null` for the key of a device that is removed, and a full re-read every
/// `Configuration.rereadInterval` (60 s by default, for firmware that changes the brightness
/// without a uevent; only while there is a backlight device, so a machine without one never
/// wakes for it), after a monitor overflow (`ENOBUFS`) and on `reread()`. Only values that
/// differ from the bus's store are published. A device whose attributes give no brightness
/// (`max_brightness` 0, text that is not a number) is skipped and logged at `warning`.
///
/// Status: `running` while it watches, with or without a backlight device (a machine without one
/// has nothing to publish; a device that appears later gets its key); `unavailable` with no access
/// to udev events; `failed` when libudev or the monitor socket fails unexpectedly.
public typealias DisplaySource = SystemSource<DisplayConfiguration>
