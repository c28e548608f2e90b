/** The device families the portal gives different next steps to. */
export type Platform = 'ios' | 'android' | 'macos' | 'windows' | 'linux' | 'unknown';

/** Guesses the OS from the User-Agent; order matters (iPadOS and Android also say "Linux"/"Mac OS X"). */
export function platformOf(userAgent: string | undefined): Platform {
  const ua = userAgent ?? '';
  if (/iPhone|iPad|iPod/.test(ua)) return 'ios';
  if (/Android/.test(ua)) return 'android';
  if (/Windows NT|Windows Phone|Win64/.test(ua)) return 'windows';
  if (/Macintosh|Mac OS X/.test(ua)) return 'macos';
  if (/Linux|X11|CrOS/.test(ua)) return 'linux';
  return 'unknown';
}

export interface NextStep {
  id: string;
  title: string;
  text: string;
  href?: string;
  linkText?: string;
}

const PROFILE: NextStep = {
  id: 'profile',
  title: 'Install the network profile',
  text: 'It adds the gateway certificate and turns on encrypted DNS through the gateway. You can remove it in Settings at any time.',
  href: '/portal/profile.mobileconfig',
  linkText: 'Download the profile',
};
const ANDROID_CA: NextStep = {
  id: 'profile',
  title: 'Install the network certificate',
  text: 'Open the downloaded file, or go to Settings > Security > Encryption & credentials > Install a certificate > CA certificate.',
  href: '/ca.crt',
  linkText: 'Download the certificate',
};
const CONNECT: NextStep = {
  id: 'connect',
  title: 'Company computer? Use Gateway Connect',
  text: 'Company computers get the Gateway Connect client from IT (MDM). Nothing to do here if it is already installed.',
  href: '/portal/connect',
  linkText: 'About Gateway Connect',
};
const CA_DESKTOP: NextStep = {
  id: 'profile',
  title: 'Personal computer? Trust the network certificate',
  text: 'Install the certificate into the system trust store so that governed AI services keep working.',
  href: '/ca.crt',
  linkText: 'Download the certificate',
};

/** Per OS: computers get the Connect client or the profile; phones and tablets get the profile only. */
export function nextSteps(platform: Platform): NextStep[] {
  switch (platform) {
    case 'ios': return [PROFILE];
    case 'android': return [ANDROID_CA];
    case 'macos': return [CONNECT, { ...PROFILE, title: 'Personal Mac? Install the network profile' }];
    case 'windows':
    case 'linux': return [CONNECT, CA_DESKTOP];
    default: return [CONNECT, PROFILE, ANDROID_CA];
  }
}
