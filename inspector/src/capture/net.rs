//! IP and UDP: from the IP header of a frame to a UDP datagram, through `etherparse`.
//!
//! Parsing is lax on purpose: a frame cut by the snap length still yields its addresses, ports and
//! whatever payload is there, marked [`Status::Truncated`]; an IP fragment is marked
//! [`Status::Fragment`] and never decoded as if whole. Nothing here panics on any input.

use std::net::SocketAddr;
use std::ops::Range;

use etherparse::err::ip::LaxHeaderSliceError;
use etherparse::{IpNumber, Ipv6ExtensionSlice, LaxIpSlice, UdpHeaderSlice};

use super::{SkipReason, Status};

/// Length of the UDP header: source port, destination port, length, checksum (2 bytes each).
const UDP_HEADER_LEN: usize = 8;

/// A UDP datagram found in a frame; `payload` is relative to the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Udp {
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) payload: Range<usize>,
    pub(crate) status: Status,
    /// The UDP header's length field (header included); 0 when there is no UDP header.
    pub(crate) udp_len: u16,
}

/// Byte offset of `inner` inside `outer`, when `inner` is a sub-slice of it.
fn offset_in(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start.checked_add(inner.len())? <= outer.len()).then_some(start)
}

/// Parses the IP packet that starts at `ip_at` in `frame` and returns its UDP datagram.
///
/// # Errors
/// The reason to skip the frame: not UDP, a malformed IP header, or a frame cut inside the IP
/// header.
pub(crate) fn udp(frame: &[u8], ip_at: usize) -> Result<Udp, SkipReason> {
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
    // The IP header's own length said more than the frame holds.
    let ip_cut = payload.incomplete;

    if payload.fragmented && !is_first_fragment(&ip) {
        // A later fragment: no UDP header, only a piece of the payload.
        return Ok(Udp {
            src: SocketAddr::new(src_ip, 0),
            dst: SocketAddr::new(dst_ip, 0),
            payload: ip_payload,
            status: Status::Fragment,
            udp_len: 0,
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
        });
    }

    // UDP length 0 is legal for IPv6 jumbograms; below 8 is malformed: use what the IP layer says.
    let udp_len = usize::from(header.length());
    let (len, status) = if udp_len < UDP_HEADER_LEN {
        (
            present,
            if ip_cut {
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
    Ok(Udp {
        src,
        dst,
        payload: start..start + len,
        status,
        udp_len: header.length(),
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
        let u = udp(&V4_UDP, 0).unwrap();
        assert_eq!(u.src, addr("10.0.0.1:5000"));
        assert_eq!(u.dst, addr("10.0.0.2:40000"));
        assert_eq!(&V4_UDP[u.payload.clone()], b"hi!");
        assert_eq!(u.status, Status::Whole);
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut padded = V4_UDP.to_vec();
        padded.extend_from_slice(&[0; 15]);
        let u = udp(&padded, 0).unwrap();
        assert_eq!(&padded[u.payload.clone()], b"hi!");
        assert_eq!(u.status, Status::Whole);
    }

    #[test]
    fn cut_by_snaplen_is_truncated_with_what_is_there() {
        let u = udp(&V4_UDP[..29], 0).unwrap();
        assert_eq!(u.status, Status::Truncated);
        assert_eq!(&V4_UDP[u.payload.clone()], b"h");
        // Cut inside the UDP header: no ports, no payload.
        let u = udp(&V4_UDP[..24], 0).unwrap();
        assert_eq!(u.status, Status::Truncated);
        assert_eq!(u.src, addr("10.0.0.1:0"));
        assert!(u.payload.is_empty());
        // Cut inside the IP header: nothing to report but the reason.
        assert_eq!(udp(&V4_UDP[..12], 0), Err(SkipReason::TruncatedHeader));
        assert_eq!(udp(&V4_UDP, 40), Err(SkipReason::TruncatedHeader));
    }

    #[test]
    fn udp_length_larger_than_ip_payload_is_truncated() {
        let mut lying = V4_UDP;
        lying[25] = 0x40;
        let u = udp(&lying, 0).unwrap();
        assert_eq!(u.status, Status::Truncated);
        assert_eq!(&lying[u.payload.clone()], b"hi!");
    }

    #[test]
    fn ipv4_fragments() {
        let mut first = V4_UDP;
        first[6] = 0x20; // more fragments
        let u = udp(&first, 0).unwrap();
        assert_eq!(u.status, Status::Fragment);
        assert_eq!(u.dst.port(), 40000);
        assert_eq!(&first[u.payload.clone()], b"hi!");

        let mut later = V4_UDP;
        later[7] = 0x02; // offset 16 bytes, last fragment
        let u = udp(&later, 0).unwrap();
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
        let u = udp(&v6, 0).unwrap();
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
        let u = udp(&frag, 0).unwrap();
        assert_eq!(u.status, Status::Fragment);
        assert_eq!(u.dst.port(), 0);
    }

    #[test]
    fn not_udp_and_malformed() {
        let mut tcp = V4_UDP;
        tcp[9] = 6;
        assert_eq!(udp(&tcp, 0), Err(SkipReason::NotUdp));
        let mut icmp = V4_UDP;
        icmp[9] = 1;
        assert_eq!(udp(&icmp, 0), Err(SkipReason::NotUdp));
        let mut bad_ihl = V4_UDP;
        bad_ihl[0] = 0x43;
        assert_eq!(udp(&bad_ihl, 0), Err(SkipReason::MalformedIp));
        let mut version = V4_UDP;
        version[0] = 0x75;
        assert_eq!(udp(&version, 0), Err(SkipReason::MalformedIp));
        assert_eq!(udp(&[], 0), Err(SkipReason::TruncatedHeader));
    }
}
