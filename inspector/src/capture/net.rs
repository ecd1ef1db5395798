//! IP and UDP: from the IP header of a frame to a UDP datagram, through `etherparse`.
//!
//! Parsing is lax on purpose: a frame cut by the snap length still yields its addresses, ports and
//! whatever payload is there, marked [`Status::Truncated`]; an IP fragment is marked
//! [`Status::Fragment`] and never decoded as if whole. Nothing here panics on any input.

use std::net::SocketAddr;
use std::ops::Range;

use etherparse::err::ip::LaxHeaderSliceError;
use etherparse::{IpNumber, Ipv6ExtensionSlice, LaxIpSlice, UdpHeaderSlice};

use super::{Flaw, LengthField, SkipReason, Status};

/// Length of the UDP header: source port, destination port, length, checksum (2 bytes each).
const UDP_HEADER_LEN: usize = 8;
/// Offset of the length field in the UDP header.
const UDP_LENGTH_AT: usize = 4;
/// Length of the fixed IPv6 header, which its payload length does not count.
const IPV6_HEADER_LEN: usize = 40;

/// A UDP datagram found in a frame; `payload` is relative to the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Udp {
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) payload: Range<usize>,
    pub(crate) status: Status,
    /// The UDP header's length field (header included); 0 when there is no UDP header.
    pub(crate) udp_len: u16,
    /// Bytes of the IP header (options and extension headers included) and of the UDP header
    /// when the frame holds one: what comes before `payload`, above the link layer.
    pub(crate) header_len: u16,
    /// A length field that claims more than there is; its `offset` is relative to the frame.
    pub(crate) flaw: Option<Flaw>,
}

/// Byte offset of `inner` inside `outer`, when `inner` is a sub-slice of it.
fn offset_in(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start.checked_add(inner.len())? <= outer.len()).then_some(start)
}

/// A flaw of a length field at `at` in the frame (`claimed` > `room`, so `room` fits a `u16`).
fn flaw(field: LengthField, claimed: u16, room: usize, at: usize) -> Flaw {
    Flaw {
        field,
        claimed,
        room: u16::try_from(room).unwrap_or(u16::MAX),
        offset: at as u64,
    }
}

/// Parses the IP packet that starts at `ip_at` in `frame` and returns its UDP datagram. `cut`
/// says the capture kept less of the frame than was on the wire (its snap length): an IP length
/// past the end of the frame is then the cut's doing, not a [`Flaw`].
///
/// # Errors
/// The reason to skip the frame: not UDP, a malformed IP header, or a frame cut inside the IP
/// header.
pub(crate) fn udp(frame: &[u8], ip_at: usize, cut: bool) -> Result<Udp, SkipReason> {
    let ip_bytes = frame.get(ip_at..).ok_or(SkipReason::TruncatedHeader)?;
    let (ip, _ext_error) = LaxIpSlice::from_slice(ip_bytes).map_err(|e| match e {
        LaxHeaderSliceError::Len(_) => SkipReason::TruncatedHeader,
        LaxHeaderSliceError::Content(_) => SkipReason::MalformedIp,
    })?;
    let payload = ip.payload();
    if payload.ip_number != IpNumber::UDP {
        return Err(SkipReason::NotUdp);
    }
    let (src_ip, dst_ip) = (ip.source_addr(), ip.destination_addr());
    let ip_start = offset_in(frame, payload.payload).ok_or(SkipReason::MalformedIp)?;
    let ip_payload = ip_start..ip_start + payload.payload.len();
    let ip_header_len = ip_start.saturating_sub(ip_at);
    let with_udp = u16::try_from(ip_header_len + UDP_HEADER_LEN).unwrap_or(u16::MAX);
    let ip_header_len = u16::try_from(ip_header_len).unwrap_or(u16::MAX);
    // The IP header's own length said more than the frame holds: where the packet ends by its
    // header, and, unless the capture cut the frame, a flaw of that length field.
    let (ip_end, ip_flaw) = if payload.incomplete {
        let (field, claimed, at, fixed) = match &ip {
            LaxIpSlice::Ipv4(v4) => (LengthField::Ipv4TotalLength, v4.header().total_len(), 2, 0),
            LaxIpSlice::Ipv6(v6) => (
                LengthField::Ipv6PayloadLength,
                v6.header().payload_length(),
                4,
                IPV6_HEADER_LEN,
            ),
        };
        let room = frame.len() - ip_at - fixed;
        let end = ip_at + fixed + usize::from(claimed);
        (end, (!cut).then(|| flaw(field, claimed, room, ip_at + at)))
    } else {
        (ip_payload.end, None)
    };

    if payload.fragmented && !is_first_fragment(&ip) {
        // A later fragment: no UDP header, only a piece of the payload.
        return Ok(Udp {
            src: SocketAddr::new(src_ip, 0),
            dst: SocketAddr::new(dst_ip, 0),
            payload: ip_payload,
            status: Status::Fragment,
            udp_len: 0,
            header_len: ip_header_len,
            flaw: ip_flaw,
        });
    }

    let Ok(header) = UdpHeaderSlice::from_slice(payload.payload) else {
        // Cut inside the UDP header: addresses known, ports not, no payload.
        return Ok(Udp {
            src: SocketAddr::new(src_ip, 0),
            dst: SocketAddr::new(dst_ip, 0),
            payload: ip_payload.end..ip_payload.end,
            status: if payload.fragmented {
                Status::Fragment
            } else {
                Status::Truncated
            },
            udp_len: 0,
            header_len: ip_header_len,
            flaw: ip_flaw,
        });
    };
    let src = SocketAddr::new(src_ip, header.source_port());
    let dst = SocketAddr::new(dst_ip, header.destination_port());
    let start = ip_payload.start + UDP_HEADER_LEN;
    let present = ip_payload.end.saturating_sub(start);

    if payload.fragmented {
        // The first fragment: the UDP header is here, the rest of the payload is not.
        return Ok(Udp {
            src,
            dst,
            payload: start..ip_payload.end,
            status: Status::Fragment,
            udp_len: header.length(),
            header_len: with_udp,
            flaw: ip_flaw,
        });
    }

    // UDP length 0 is legal for IPv6 jumbograms; below 8 is malformed: use what the IP layer says.
    let udp_len = usize::from(header.length());
    let (len, status) = if udp_len < UDP_HEADER_LEN {
        (
            present,
            if payload.incomplete {
                Status::Truncated
            } else {
                Status::Whole
            },
        )
    } else {
        let declared = udp_len - UDP_HEADER_LEN;
        if declared <= present {
            // Anything past the UDP length is link padding (Ethernet pads to 60 bytes).
            (declared, Status::Whole)
        } else {
            (present, Status::Truncated)
        }
    };
    // A UDP length past the end the IP header gives the packet: the UDP header is wrong,
    // whether or not the capture also cut the frame.
    let room = ip_end.saturating_sub(ip_payload.start);
    let udp_flaw = (udp_len > room).then(|| {
        flaw(
            LengthField::UdpLength,
            header.length(),
            room,
            ip_payload.start + UDP_LENGTH_AT,
        )
    });
    Ok(Udp {
        src,
        dst,
        payload: start..start + len,
        status,
        udp_len: header.length(),
        header_len: with_udp,
        flaw: ip_flaw.or(udp_flaw),
    })
}

/// True for the fragment at offset 0, which carries the UDP header.
fn is_first_fragment(ip: &LaxIpSlice<'_>) -> bool {
    match ip {
        LaxIpSlice::Ipv4(v4) => v4.header().fragments_offset().value() == 0,
        LaxIpSlice::Ipv6(v6) => v6.extensions().clone().into_iter().all(|ext| match ext {
            Ipv6ExtensionSlice::Fragment(f) => f.fragment_offset().value() == 0,
            _ => true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IPv4 header (20 bytes, no options) + UDP header, payload "hi!", ports 5000 -> 40000.
    const V4_UDP: [u8; 31] = [
        0x45, 0x00, 0x00, 0x1F, // version 4, IHL 5, total length 31
        0x00, 0x01, 0x00, 0x00, // id 1, no flags, offset 0
        0x40, 0x11, 0x00, 0x00, // TTL 64, protocol UDP, checksum (unchecked)
        10, 0, 0, 1, // source
        10, 0, 0, 2, // destination
        0x13, 0x88, 0x9C, 0x40, // ports 5000 -> 40000
        0x00, 0x0B, 0x00, 0x00, // UDP length 11, checksum 0
        b'h', b'i', b'!',
    ];

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn whole_ipv4_datagram() {
        let u = udp(&V4_UDP, 0, false).unwrap();
        assert_eq!(u.src, addr("10.0.0.1:5000"));
        assert_eq!(u.dst, addr("10.0.0.2:40000"));
        assert_eq!(&V4_UDP[u.payload.clone()], b"hi!");
        assert_eq!(u.status, Status::Whole);
        // 20 bytes of IPv4 header and 8 of UDP header before the payload.
        assert_eq!(u.header_len, 28);
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut padded = V4_UDP.to_vec();
        padded.extend_from_slice(&[0; 15]);
        let u = udp(&padded, 0, false).unwrap();
        assert_eq!(&padded[u.payload.clone()], b"hi!");
        assert_eq!(u.status, Status::Whole);
    }

    #[test]
    fn cut_by_snaplen_is_truncated_with_what_is_there() {
        let u = udp(&V4_UDP[..29], 0, true).unwrap();
        assert_eq!(u.status, Status::Truncated);
        assert_eq!(&V4_UDP[u.payload.clone()], b"h");
        // Cut inside the UDP header: no ports, no payload.
        let u = udp(&V4_UDP[..24], 0, true).unwrap();
        assert_eq!(u.status, Status::Truncated);
        assert_eq!(u.src, addr("10.0.0.1:0"));
        assert!(u.payload.is_empty());
        // Cut inside the IP header: nothing to report but the reason.
        assert_eq!(
            udp(&V4_UDP[..12], 0, true),
            Err(SkipReason::TruncatedHeader)
        );
        assert_eq!(udp(&V4_UDP, 40, false), Err(SkipReason::TruncatedHeader));
    }

    #[test]
    fn a_snap_length_cut_is_no_flaw() {
        let u = udp(&V4_UDP[..29], 0, true).unwrap();
        assert_eq!((u.status, u.udp_len, u.flaw), (Status::Truncated, 11, None));
    }

    #[test]
    fn udp_length_larger_than_ip_payload_is_a_flaw_of_the_udp_header() {
        let mut lying = V4_UDP;
        lying[25] = 0x40;
        // Whether or not the capture also cut the frame: the IP header leaves 11 bytes.
        for (frame, cut) in [(&lying[..], false), (&lying[..29], true)] {
            let u = udp(frame, 0, cut).unwrap();
            assert_eq!(u.status, Status::Truncated);
            assert_eq!(
                u.flaw,
                Some(Flaw {
                    field: LengthField::UdpLength,
                    claimed: 64,
                    room: 11,
                    offset: 24,
                })
            );
        }
        assert_eq!(&lying[udp(&lying, 0, false).unwrap().payload], b"hi!");
    }

    #[test]
    fn ip_length_past_the_end_of_an_uncut_frame_is_a_flaw_of_the_ip_header() {
        // IPv4 total length 1000 in a 31-byte frame; the UDP datagram itself fits.
        let mut lying = V4_UDP;
        lying[2..4].copy_from_slice(&1000u16.to_be_bytes());
        let u = udp(&lying, 0, false).unwrap();
        assert_eq!(
            (u.status, &lying[u.payload.clone()]),
            (Status::Whole, &b"hi!"[..])
        );
        let want = Flaw {
            field: LengthField::Ipv4TotalLength,
            claimed: 1000,
            room: 31,
            offset: 2,
        };
        assert_eq!(u.flaw, Some(want));
        // The same bytes in a frame the capture cut: the cut explains them.
        assert_eq!(udp(&lying, 0, true).unwrap().flaw, None);
        // Behind a 14-byte link header, the offset is the frame's.
        let mut framed = vec![0; 14];
        framed.extend_from_slice(&lying);
        assert_eq!(
            udp(&framed, 14, false).unwrap().flaw,
            Some(Flaw { offset: 16, ..want })
        );
    }

    #[test]
    fn ipv4_fragments() {
        let mut first = V4_UDP;
        first[6] = 0x20; // more fragments
        let u = udp(&first, 0, false).unwrap();
        assert_eq!(u.status, Status::Fragment);
        assert_eq!(u.dst.port(), 40000);
        // The first fragment's UDP length counts the later fragments too: no flaw.
        let mut longer = first;
        longer[25] = 0x40;
        assert_eq!(udp(&longer, 0, false).unwrap().flaw, None);
        assert_eq!(&first[u.payload.clone()], b"hi!");

        let mut later = V4_UDP;
        later[7] = 0x02; // offset 16 bytes, last fragment
        let u = udp(&later, 0, false).unwrap();
        assert_eq!(u.status, Status::Fragment);
        assert_eq!(u.dst, addr("10.0.0.2:0"));
        assert_eq!(u.payload.len(), 11);
    }

    #[test]
    fn ipv6_datagram_and_fragment() {
        let mut v6 = vec![
            0x60, 0, 0, 0, // version 6
            0x00, 0x0A, 0x11, 0x40, // payload length 10, next header UDP, hop limit 64
        ];
        v6.extend_from_slice(&[0; 15]);
        v6.push(1); // ::1
        v6.extend_from_slice(&[0; 15]);
        v6.push(1); // ::1
        v6.extend_from_slice(&[0x9C, 0x40, 0x9C, 0x41, 0x00, 0x0A, 0x00, 0x00, b'o', b'k']);
        let u = udp(&v6, 0, false).unwrap();
        assert_eq!(u.src, addr("[::1]:40000"));
        assert_eq!(u.dst, addr("[::1]:40001"));
        assert_eq!(&v6[u.payload.clone()], b"ok");
        assert_eq!(u.status, Status::Whole);

        // The same datagram behind a fragment header at offset 8: a later fragment.
        let mut frag = v6[..40].to_vec();
        frag[4..6].copy_from_slice(&[0x00, 0x12]);
        frag[6] = 44; // fragment header
        frag.extend_from_slice(&[0x11, 0, 0x00, 0x40, 0, 0, 0, 7]); // next UDP, offset 8, last
        frag.extend_from_slice(&v6[40..]);
        let u = udp(&frag, 0, false).unwrap();
        assert_eq!(u.status, Status::Fragment);
        assert_eq!(u.dst.port(), 0);

        // A payload length of 256 with 10 bytes after the fixed header, in an uncut frame.
        let mut lying = v6.clone();
        lying[4..6].copy_from_slice(&256u16.to_be_bytes());
        let u = udp(&lying, 0, false).unwrap();
        assert_eq!(
            u.flaw,
            Some(Flaw {
                field: LengthField::Ipv6PayloadLength,
                claimed: 256,
                room: 10,
                offset: 4,
            })
        );
        assert_eq!(udp(&lying, 0, true).unwrap().flaw, None);
    }

    #[test]
    fn not_udp_and_malformed() {
        let mut tcp = V4_UDP;
        tcp[9] = 6;
        assert_eq!(udp(&tcp, 0, false), Err(SkipReason::NotUdp));
        let mut icmp = V4_UDP;
        icmp[9] = 1;
        assert_eq!(udp(&icmp, 0, false), Err(SkipReason::NotUdp));
        let mut bad_ihl = V4_UDP;
        bad_ihl[0] = 0x43;
        assert_eq!(udp(&bad_ihl, 0, false), Err(SkipReason::MalformedIp));
        let mut version = V4_UDP;
        version[0] = 0x75;
        assert_eq!(udp(&version, 0, false), Err(SkipReason::MalformedIp));
        assert_eq!(udp(&[], 0, false), Err(SkipReason::TruncatedHeader));
    }
}
