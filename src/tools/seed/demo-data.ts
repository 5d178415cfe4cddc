import type { BetSlipItemInput } from '../../api/bet-slip/bet-slip-json.js';
import type { ConfigurationStatus, RewardStatus } from '../../shared/db/schema.js';

/**
 * The demo set loaded by `npm run seed` without flags. Every identifier is fixed so the README can
 * show working requests, and so a second run finds every row already there and inserts nothing.
 * Decimal amounts are strings: they go into `numeric` columns exactly as written.
 */

export const DEMO_MERCHANT = {
  id: '00000000-0000-4000-8000-000000000001',
  name: 'Demo Casino',
  secretKey: 'demo-secret-key-change-me',
} as const;

export const DEMO_SESSION_TOKEN = 'demo-session-token';
export const DEMO_EXPIRED_SESSION_TOKEN = 'demo-expired-token';

interface DemoBetConstraint {
  betAmount: string;
  maxWinPerBet: string;
}

interface DemoGame {
  id: string;
  gameId: number;
  betConstraints: Record<string, DemoBetConstraint>;
}

export interface DemoConfiguration {
  id: string;
  externalId: string;
  name: string;
  status: ConfigurationStatus;
  numberOfFreeBets: number;
  startDate: string;
  endDate: string;
  durationMinutes: number;
  games: DemoGame[];
}

export const DEMO_CONFIGURATIONS: readonly DemoConfiguration[] = [
  {
    id: '10000000-0000-4000-8000-000000000001',
    externalId: 'demo-config-welcome',
    name: 'Welcome Free Bets',
    status: 'ACTIVE',
    numberOfFreeBets: 10,
    startDate: '2026-01-01T00:00:00.000Z',
    endDate: '2030-12-31T23:59:59.000Z',
    durationMinutes: 10_080,
    games: [
      {
        id: '20000000-0000-4000-8000-000000000001',
        gameId: 1001,
        betConstraints: {
          EUR: { betAmount: '0.10', maxWinPerBet: '50.00' },
          USD: { betAmount: '0.10', maxWinPerBet: '55.00' },
        },
      },
      {
        id: '20000000-0000-4000-8000-000000000002',
        gameId: 1002,
        betConstraints: {
          EUR: { betAmount: '1.00', maxWinPerBet: '250.50' },
          USD: { betAmount: '1.20', maxWinPerBet: '300' },
        },
      },
    ],
  },
  {
    id: '10000000-0000-4000-8000-000000000002',
    externalId: 'demo-config-weekend',
    name: 'Weekend Boost',
    status: 'ACTIVE',
    numberOfFreeBets: 5,
    startDate: '2026-06-01T00:00:00.000Z',
    endDate: '2031-06-01T00:00:00.000Z',
    durationMinutes: 2_880,
    games: [
      {
        id: '20000000-0000-4000-8000-000000000003',
        gameId: 2001,
        betConstraints: { USD: { betAmount: '0.50', maxWinPerBet: '100.00' } },
      },
    ],
  },
  {
    id: '10000000-0000-4000-8000-000000000003',
    externalId: 'demo-config-summer-2025',
    name: 'Summer Promo 2025',
    status: 'INACTIVE',
    numberOfFreeBets: 20,
    startDate: '2025-06-01T00:00:00.000Z',
    endDate: '2025-08-31T23:59:59.000Z',
    durationMinutes: 1_440,
    games: [
      {
        id: '20000000-0000-4000-8000-000000000004',
        gameId: 3001,
        betConstraints: {
          EUR: { betAmount: '0.20', maxWinPerBet: '20.00' },
          USD: { betAmount: '0.25', maxWinPerBet: '25.00' },
        },
      },
    ],
  },
];

export interface DemoPlayer {
  playerId: string;
  username: string;
  nickname: string;
  firstName: string;
  lastName: string;
  gender: string;
  email: string;
  phone: string;
  address: string;
  city: string;
  country: string;
  language: string;
  test: boolean;
  wallet: { currency: string; balance: string };
}

export const DEMO_PLAYERS: readonly DemoPlayer[] = [
  {
    playerId: 'demo-player-1',
    username: 'alice.demo',
    nickname: 'Ace',
    firstName: 'Alice',
    lastName: 'Martin',
    gender: 'F',
    email: 'alice@example.com',
    phone: '+35699000001',
    address: '1 Republic Street',
    city: 'Valletta',
    country: 'MT',
    language: 'ENG',
    test: false,
    wallet: { currency: 'EUR', balance: '1250.75' },
  },
  {
    playerId: 'demo-player-2',
    username: 'bob.demo',
    nickname: 'Bobby',
    firstName: 'Bob',
    lastName: 'Smith',
    gender: 'M',
    email: 'bob@example.com',
    phone: '+12025550102',
    address: '200 Main Street',
    city: 'Springfield',
    country: 'US',
    language: 'ENG',
    test: false,
    wallet: { currency: 'USD', balance: '80.10' },
  },
  {
    playerId: 'demo-player-3',
    username: 'carla.test',
    nickname: 'Carla',
    firstName: 'Carla',
    lastName: 'Rossi',
    gender: 'F',
    email: 'carla@example.com',
    phone: '+390612345678',
    address: 'Via Roma 10',
    city: 'Roma',
    country: 'IT',
    language: 'ITA',
    test: true,
    wallet: { currency: 'EUR', balance: '0.00' },
  },
];

export interface DemoReward {
  id: string;
  externalId: string | null;
  playerId: string;
  configurationId: string;
  status: RewardStatus;
}

const [welcome, weekend, summer] = DEMO_CONFIGURATIONS.map((configuration) => configuration.id) as [
  string,
  string,
  string,
];

/** Every reward state, and some rewards without an external id (cancelled by id only). */
export const DEMO_REWARDS: readonly DemoReward[] = [
  {
    id: '30000000-0000-4000-8000-000000000001',
    externalId: 'demo-reward-1',
    playerId: 'demo-player-1',
    configurationId: welcome,
    status: 'ACTIVE',
  },
  {
    id: '30000000-0000-4000-8000-000000000002',
    externalId: 'demo-reward-2',
    playerId: 'demo-player-1',
    configurationId: weekend,
    status: 'ACTIVE',
  },
  {
    id: '30000000-0000-4000-8000-000000000003',
    externalId: 'demo-reward-3',
    playerId: 'demo-player-1',
    configurationId: welcome,
    status: 'USED',
  },
  {
    id: '30000000-0000-4000-8000-000000000004',
    externalId: null,
    playerId: 'demo-player-1',
    configurationId: weekend,
    status: 'ACTIVE',
  },
  {
    id: '30000000-0000-4000-8000-000000000005',
    externalId: 'demo-reward-5',
    playerId: 'demo-player-2',
    configurationId: summer,
    status: 'EXPIRED',
  },
  {
    id: '30000000-0000-4000-8000-000000000006',
    externalId: 'demo-reward-6',
    playerId: 'demo-player-2',
    configurationId: welcome,
    status: 'CANCELLED',
  },
  {
    id: '30000000-0000-4000-8000-000000000007',
    externalId: 'demo-reward-7',
    playerId: 'demo-player-2',
    configurationId: welcome,
    status: 'ACTIVE',
  },
  {
    id: '30000000-0000-4000-8000-000000000008',
    externalId: null,
    playerId: 'demo-player-3',
    configurationId: weekend,
    status: 'ACTIVE',
  },
];

/** When the demo's CANCELLED reward was cancelled: fixed, so re-running the seed writes nothing new. */
export const DEMO_CANCELLED_AT = '2026-01-15T12:00:00.000Z';

/** A bet slip item as the repository takes it. */
type DemoBet = BetSlipItemInput;

export interface DemoSession {
  id: string;
  token: string;
  playerId: string;
  currency: string;
  expiresAt: string;
  ipAddress: string | null;
  devicePlatform: string | null;
  betSlip: DemoBet[];
}

export const DEMO_SESSIONS: readonly DemoSession[] = [
  {
    id: '40000000-0000-4000-8000-000000000001',
    token: DEMO_SESSION_TOKEN,
    playerId: 'demo-player-1',
    currency: 'EUR',
    expiresAt: '2099-12-31T23:59:59.000Z',
    ipAddress: '203.0.113.10',
    devicePlatform: 'desktop',
    betSlip: [
      {
        sportId: 'football',
        sportName: 'Football',
        betSlipId: 'demo-slip-1',
        matchName: 'Lions FC vs Tigers United',
        matchId: 'match-1001',
        competitionId: 'comp-premier',
        competitionName: 'Premier Demo League',
        marketId: 'market-1x2',
        marketName: 'Match result',
        marketOptionId: 'option-home',
        marketOptionName: 'Lions FC',
        odd: 1.85,
        margin: null,
        homeTeam: 'Lions FC',
        awayTeam: 'Tigers United',
      },
      {
        sportId: 'football',
        sportName: 'Football',
        betSlipId: 'demo-slip-1',
        matchName: 'Eagles vs Wolves',
        matchId: 'match-1002',
        competitionId: 'comp-premier',
        competitionName: 'Premier Demo League',
        marketId: 'market-total-goals',
        marketName: 'Total goals over/under',
        marketOptionId: 'option-over',
        marketOptionName: 'Over 2.5',
        odd: 2.1,
        margin: 2.5,
        homeTeam: 'Eagles',
        awayTeam: 'Wolves',
      },
      {
        sportId: 'basketball',
        sportName: 'Basketball',
        betSlipId: null,
        matchName: 'Harbour Sharks vs City Bulls',
        matchId: 'match-2001',
        competitionId: 'comp-hoops',
        competitionName: 'Demo Basketball Cup',
        marketId: 'market-handicap',
        marketName: 'Point handicap',
        marketOptionId: 'option-away-handicap',
        marketOptionName: 'City Bulls +4.5',
        odd: 1.95,
        margin: 4.5,
        homeTeam: 'Harbour Sharks',
        awayTeam: 'City Bulls',
      },
    ],
  },
  {
    id: '40000000-0000-4000-8000-000000000002',
    token: DEMO_EXPIRED_SESSION_TOKEN,
    playerId: 'demo-player-2',
    currency: 'USD',
    expiresAt: '2026-01-01T00:00:00.000Z',
    ipAddress: null,
    devicePlatform: 'mobile',
    betSlip: [
      {
        sportId: 'tennis',
        sportName: 'Tennis',
        betSlipId: 'demo-slip-2',
        matchName: 'A. Player vs B. Player',
        matchId: 'match-3001',
        competitionId: 'comp-open',
        competitionName: 'Demo Open',
        marketId: 'market-winner',
        marketName: 'Match winner',
        marketOptionId: 'option-first',
        marketOptionName: 'A. Player',
        odd: 1.5,
        margin: null,
        homeTeam: 'A. Player',
        awayTeam: 'B. Player',
      },
    ],
  },
];
